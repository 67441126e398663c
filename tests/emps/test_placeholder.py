"""The Placeholder: a silent copy of a strided tensor, and the redesign that writes back."""

from __future__ import annotations

import pytest
import torch

from course.emps import OutputPlaceholder, Placeholder


def test_a_strided_tensor_is_gathered_into_a_copy_a_contiguous_one_is_not():
    strided = torch.arange(6.0).reshape(2, 3).t()
    gathered = Placeholder(strided)
    assert gathered.gathered and gathered.buffer.is_contiguous()
    assert gathered.buffer.data_ptr() != strided.data_ptr() and gathered.buffer.equal(strided)
    plain = torch.arange(6.0)
    assert Placeholder(plain).buffer is plain and not Placeholder(plain).gathered
    assert Placeholder(strided, strided_buffers=True).buffer is strided  # macOS 15


def test_a_write_to_a_plain_placeholder_is_lost_an_output_placeholder_keeps_it():
    lost = torch.zeros(3, 2).t()
    Placeholder(lost).buffer.fill_(1.0)
    assert lost.eq(0).all()
    kept = torch.zeros(3, 2).t()
    with OutputPlaceholder(kept) as output:
        output.buffer.fill_(1.0)
    assert kept.eq(1).all()


def test_an_output_placeholder_writes_nothing_back_when_the_graph_fails():
    out = torch.zeros(3, 2).t()
    with pytest.raises(ZeroDivisionError), OutputPlaceholder(out) as output:
        output.buffer.fill_(1.0)
        raise ZeroDivisionError
    assert out.eq(0).all()
