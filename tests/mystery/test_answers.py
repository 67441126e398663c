"""Reading answers: every spelling of an op, why an out-of-place function is not the culprit,
conditions, and the fix verdict."""

from __future__ import annotations

import pytest

from course.audit.args import find_ops
from course.mystery.answers import OPS, NotAnAnswer, condition, judge_fix, op_name
from course.mystery.scenarios import ScenarioReport


@pytest.mark.parametrize(
    "typed",
    [
        "lerp_",
        "lerp",
        "aten::lerp_",
        "lerp_.Scalar",
        "aten::lerp_.Scalar",
        "torch.Tensor.lerp_",
        "Tensor.lerp_",
        "x.lerp_()",
        " lerp_ ",
        "aten::lerp.out",
        "torch._foreach_lerp_",
        "aten::_foreach_lerp_.ScalarList",
    ],
)
def test_every_spelling_of_the_in_place_op_names_it(typed):
    assert op_name(typed) == "lerp_"


@pytest.mark.parametrize(
    "typed",
    [
        "torch.lerp",
        "aten::lerp",
        "aten::lerp.Scalar",
        "torch.Tensor.lerp",
        "F.relu",
        "nn.functional.relu",
        "torch._foreach_lerp",
    ],
)
def test_an_out_of_place_function_is_explained_not_accepted(typed):
    with pytest.raises(NotAnAnswer, match="out-of-place function: it returns a new tensor"):
        op_name(typed)


@pytest.mark.parametrize("typed", ["frobnicate_", "", None, 3, ["lerp_"]])
def test_anything_else_is_a_clear_not_yet(typed):
    with pytest.raises(NotAnAnswer, match="op="):
        op_name(typed)


def test_every_suspect_is_an_op_the_auditor_accepts():
    for op in OPS:
        assert find_ops(op), op


def test_conditions_are_read_as_typed_and_refused_with_the_list():
    assert condition("channels_last") == {"channels-last"}
    with pytest.raises(NotAnAnswer, match="case.conditions\\(\\) lists them: transposed"):
        condition("diagonal")


@pytest.mark.parametrize(
    "typed",
    [
        "large+unaligned",
        "unaligned + large",
        "large and unaligned",
        "large, unaligned",
        ("large", "unaligned"),
        ["unaligned", "large"],
    ],
)
def test_two_conditions_at_once_are_read_however_they_are_joined(typed):
    assert condition(typed) == {"large", "unaligned"}


@pytest.mark.parametrize("typed", [("large", "unaligned", "bf16"), (), 3, "large+diagonal"])
def test_more_than_two_conditions_or_an_unknown_half_are_refused(typed):
    with pytest.raises(NotAnAnswer):
        condition(typed)


def _report(losses, metric, moved):
    return ScenarioReport("emps:0", "classify", losses, metric, moved, {})


def test_a_fix_passes_only_without_the_trigger_and_without_a_symptom():
    healthy = _report([1.0, 0.5], 0.9, {"w": 1.0})
    assert judge_fix(_report([1.0, 0.5], 0.9, {"w": 1.0}), healthy, 0).passed
    assert "still met its condition 3 times" in judge_fix(healthy, healthy, 3).message
    frozen = judge_fix(_report([1.0, 0.9], 0.9, {"w": 0.0}), healthy, 0)
    assert not frozen.passed and "w never changes" in frozen.message
    nan = judge_fix(_report([1.0, float("nan")], 0.9, {"w": 1.0}), healthy, 0)
    assert not nan.passed and "NaN at step 2" in nan.message
