"""05.custom_op: hidden inputs that vary layout, dtype, rank, offset and beta; each wrong pair
told which side is at fault and why."""

from __future__ import annotations

import torch

from course.dispatch.exercises import custom_op
from course.exercises import check
from tests.corpus import corpus_tests
from tests.dispatch.exercises.corpus_custom_op import CORPORA

WRONG = CORPORA[0].wrong


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_operand_order_is_not_blamed_on_a_contiguous_call():
    operand_order = check("05.custom_op", WRONG["grad's term first"][0]())
    assert ".contiguous()" not in operand_order.message
    contiguous = check("05.custom_op", WRONG["a .contiguous() in the real kernel"][0]())
    assert "grad's term" not in contiguous.message and "empty_like" not in contiguous.message


def test_inputs_vary_every_parameter_of_the_schema():
    cases = custom_op.inputs()
    assert len({c.beta for c in cases}) == len(cases)
    assert {c.avg_sq.dtype for c in cases} == {torch.float32, torch.float64}
    assert any(c.avg_sq.dim() > 2 for c in cases)
    assert any(c.avg_sq.storage_offset() > 0 for c in cases)
    assert any(not c.avg_sq.is_contiguous() for c in cases)
    assert any(c.grad.stride() != c.avg_sq.stride() for c in cases)


def test_the_learner_gets_copies_with_the_same_layout_and_offset():
    sliced = custom_op.inputs()[3].avg_sq
    copy = custom_op._copy_layout(sliced)
    assert copy.stride() == sliced.stride() and copy.storage_offset() == sliced.storage_offset()
    assert torch.equal(copy, sliced) and copy.data_ptr() != sliced.data_ptr()
    fake = custom_op._meta_like(sliced)
    assert fake.device.type == "meta" and fake.storage_offset() == sliced.storage_offset()
