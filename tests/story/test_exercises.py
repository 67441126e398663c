"""Notebook 01's checkers: each wrong answer fails on the variant that exposes it, and says why."""

from __future__ import annotations

import pytest

from course.exercises import check, get
from course.story import exercises


def messages(name: str) -> list[str]:
    return [check(name, wrong()).message for wrong in get(name).wrong_answers]


def test_loss_floor_rejects_per_element_zero_model_unsquared_and_constant():
    assert check("01.loss_floor", get("01.loss_floor").reference()).passed
    assert all("not the loss a perfect model reaches" in m for m in messages("01.loss_floor"))


def test_loss_floor_wants_a_number():
    verdict = check("01.loss_floor", lambda data: (data.x - data.x).pow(2).sum(-1).mean())
    assert not verdict.passed and "use .item()" in verdict.message


def test_snapshot_views_fail_and_cpu_aliasing_is_caught_on_the_cpu():
    found = messages("01.snapshot")
    assert all("shares memory" in m for m in found)
    assert "the same model on the CPU" in found[3]  # .detach().cpu() copies only off the CPU


def test_frozen_names_catches_close_aliases_thresholds_and_memory():
    allclose, aliased, threshold, constant = messages("01.frozen_names")
    assert "lr = 1e-8" in allclose and "lr = 1e-8" in threshold
    assert "bitwise" in aliased and "fixed-macos14" in constant


def test_frozen_names_wants_names():
    verdict = check("01.frozen_names", lambda model, train: 1)
    assert not verdict.passed and "list of parameter names" in verdict.message


@pytest.mark.parametrize("index", range(len(exercises.FROZEN_CASES)))
def test_every_frozen_case_is_a_real_run(index):
    """The expected answers come from the reference experiment, and they vary across cases."""
    assert isinstance(exercises._expected_frozen(index), tuple)


def test_the_cases_disagree_so_a_constant_cannot_pass():
    answers = {exercises._expected_frozen(i) for i in range(len(exercises.FROZEN_CASES))}
    assert answers == {(), ("encoder.weight",), ("encoder.bias", "encoder.weight")}


def test_prediction_outcome_is_measured():
    assert exercises._count_frozen() == "1"
