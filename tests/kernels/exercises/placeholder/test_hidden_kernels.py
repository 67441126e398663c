"""The hidden kernels: each wrong only where one kind of careless test cannot see it."""

from __future__ import annotations

import torch

from course.kernels import placeholder_lab
from course.kernels.exercises.placeholder import hidden_kernels as hk


def _run(kernel, layout: str = "transposed"):
    got, want, _ = placeholder_lab.run_addcmul(kernel, placeholder_lab.layouts()[layout])
    return got, want


def test_the_summary_blind_swap_changes_values_no_sum_sees():
    got, want = _run(hk.summary_blind_swap())
    assert not got.equal(want)
    assert got.sum() == want.sum() and got.flatten().sort()[0].equal(want.flatten().sort()[0])


def test_one_bit_off_is_one_element_one_bit_away():
    got, want = _run(hk.one_bit_off_unsummed())
    differs = (got != want).nonzero()
    assert len(differs) == 1 and got.sum() == want.sum()
    assert (
        abs(
            int(got.view(torch.int32)[tuple(differs[0])])
            - int(want.view(torch.int32)[tuple(differs[0])])
        )
        == 1
    )


def test_unless_contiguous_is_right_on_a_contiguous_output_only():
    kernel = hk.unless_contiguous(hk.three_percent_off)
    got, want = _run(kernel, "contiguous")
    assert got.equal(want)
    got, want = _run(kernel, "transposed")
    assert torch.allclose(got, want * 1.03) and not got.equal(want)
