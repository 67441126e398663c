"""Watching a learner's function: the ready-made helpers it called, seen through any wrapper."""

from __future__ import annotations

import sys

import torch

from course.adam import scratch
from course.exercises.watch import learner_result, ready_made


def test_a_ready_made_function_is_seen_through_a_wrapper_and_the_hook_is_restored():
    before = sys.getprofile()
    param, grad = torch.zeros(3), torch.ones(3)
    with ready_made({"adam": scratch.adam_step}) as used:
        (lambda: scratch.adam_step(param, grad, {}))()
    assert used == ["adam"] and sys.getprofile() is before
    with ready_made({"adam": scratch.adam_step}) as used:
        param.add_(1)
    assert used == []


def test_ready_made_keeps_an_earlier_profile_hook_informed():
    calls: list[str] = []
    earlier = lambda frame, event, arg: calls.append(event)  # noqa: E731
    sys.setprofile(earlier)
    try:
        with ready_made({"adam": scratch.adam_step}) as used:
            scratch.adam_step(torch.zeros(2), torch.ones(2), {})
        assert used == ["adam"] and "call" in calls and sys.getprofile() is earlier
    finally:
        sys.setprofile(None)


def test_a_learner_result_is_a_table_cell_whatever_the_function_does():
    def scaffold():
        raise NotImplementedError

    def broken():
        return 1 / 0

    assert learner_result(lambda: 42) == 42
    assert learner_result(scaffold) == "not written yet"
    assert learner_result(broken) == "raised ZeroDivisionError"
