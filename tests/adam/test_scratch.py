"""The from-scratch Adam equals torch.optim.Adam; its traced step shows the story's layouts."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.adam.scratch import (
    adam_step,
    compare_with_torch,
    comparison_rows,
    init_state,
    sample_problem,
    traced_step,
)
from course.errors import CourseError


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
@pytest.mark.parametrize("amsgrad", [False, True])
def test_from_scratch_adam_matches_torch_bitwise(weight_decay, amsgrad):
    result = compare_with_torch(6, weight_decay=weight_decay, amsgrad=amsgrad)
    expected_keys = {"param", "exp_avg", "exp_avg_sq"} | ({"max_exp_avg_sq"} if amsgrad else set())
    assert set(result.max_diff) == expected_keys
    assert result.bitwise_equal, result.max_diff


def test_comparison_rows_cover_the_four_option_combinations():
    rows = comparison_rows(3)
    assert [(r["weight_decay"], r["amsgrad"]) for r in rows] == [
        (0.0, False),
        (0.1, False),
        (0.0, True),
        (0.1, True),
    ]
    assert all(r["bitwise equal"] for r in rows)


def test_a_mistake_in_adam_step_would_be_caught():
    """The comparison is not vacuous: a perturbed parameter shows up as a difference."""
    start = torch.randn(4, 3).T.clone()
    state = {}
    mine = start.clone()
    adam_step(mine, torch.ones_like(mine), state, lr=0.1)
    assert not torch.equal(mine, start)
    assert state["step"] == 1


def test_state_keeps_the_parameters_strides():
    param = torch.randn(5, 3).T.clone()  # stride (1, 3)
    state = init_state(param, amsgrad=True)
    for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        assert state[key].stride() == param.stride() == (1, 3)


def test_traced_step_shows_non_contiguous_outputs_of_addcmul_and_addcdiv():
    records = traced_step()
    by_op = {r.op: r for r in records}
    assert by_op["aten::addcmul_"].output == "weight.exp_avg_sq"
    assert by_op["aten::addcdiv_"].output == "weight"
    assert by_op["aten::lerp_.Scalar"].output == "weight.exp_avg"
    for op in ("aten::addcmul_", "aten::addcdiv_", "aten::lerp_.Scalar", "aten::mul_.Tensor"):
        assert not by_op[op].contiguous
        assert by_op[op].stride == (1, 4)
        assert by_op[op].device == emps.DEVICE
    assert "aten::zeros_like" not in by_op  # the state was created on the untraced first step


def test_traced_step_on_cpu_has_the_same_ops():
    ops = [r.op for r in traced_step(device="cpu") if r.device == "cpu" and r.shape]
    assert "aten::addcmul_" in ops and "aten::addcdiv_" in ops


def test_sizes_a_learner_types_are_bounded():
    with pytest.raises(CourseError, match="steps=0"):
        compare_with_torch(0)
    with pytest.raises(CourseError, match="shape=\\(100000, 100000\\)"):
        sample_problem(shape=(10**5, 10**5))
    with pytest.raises(CourseError, match="shape="):
        traced_step(shape=(4,))
