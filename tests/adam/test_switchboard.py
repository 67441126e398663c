"""The four switchboard outcomes, measured on the emulated device, and the widget around them."""

from __future__ import annotations

import math

import pytest

from course.adam.switchboard import (
    CASES,
    classify,
    find_case,
    outcome_figure,
    outcome_table,
    outcomes,
    run_case,
    switchboard,
)
from course.errors import CourseError


@pytest.fixture(scope="module")
def results():
    return {o.case.label: o for o in outcomes()}


def test_no_bug_trains(results):
    o = results["no bug"]
    assert o.verdict == "trains"
    assert 0 < o.encoder_change[0] < 0.01  # about lr per step
    assert o.encoder_exp_avg_sq_max > 0


def test_only_addcmul_broken_explodes_with_exp_avg_sq_zero(results):
    o = results["addcmul_ only"]
    assert o.verdict == "explodes"
    assert o.encoder_exp_avg_sq_max == 0.0
    assert o.encoder_change[0] > 1000 * o.lr  # lr * m / (0 + eps) is huge
    assert not math.isfinite(o.loss[-1])


def test_only_addcdiv_broken_freezes_the_encoder(results):
    o = results["addcdiv_ only"]
    assert o.verdict == "frozen" and o.encoder_frozen
    assert o.encoder_exp_avg_sq_max > 0
    assert all(c == 0.0 for c in o.encoder_change)


def test_both_broken_freeze_with_exp_avg_sq_zero(results):
    o = results["both"]
    assert o.verdict == "frozen" and o.encoder_frozen
    assert o.encoder_exp_avg_sq_max == 0.0  # the second bug masked the first


def test_runs_are_cached(results):
    assert run_case(CASES[0]) is results["no bug"]


def test_classify_from_measurements():
    assert classify((0.001, 0.002), False, 1e-3) == "trains"
    assert classify((0.0, 0.0), True, 1e-3) == "frozen"
    assert classify((5.0, float("nan")), False, 1e-3) == "explodes"


def test_find_case_maps_toggles():
    assert find_case(False, False).label == "no bug"
    assert find_case(True, True).label == "both"
    assert find_case(True, False).broken == frozenset({"addcmul"})


def test_table_and_figure(results):
    table = outcome_table(list(results.values()))
    assert "explodes" in table and "frozen" in table and "trains" in table
    fig = outcome_figure(list(results.values()), highlight="both")
    assert len(fig.axes) == 4


def test_bad_steps_raise():
    with pytest.raises(CourseError, match="steps"):
        run_case(CASES[0], steps=0)


def test_widget_runs_on_button_not_on_toggle(results):
    panel = switchboard()
    assert panel.error == "" and "both" in panel.text.value
    before = panel.text.value
    panel.controls["addcdiv_broken"].value = False  # no redraw until Run
    assert panel.text.value == before
    panel.button.click()
    assert "addcmul_ only" in panel.text.value and "explodes" in panel.text.value
    assert panel.image.value


def test_widget_shows_a_message_for_bad_steps():
    panel = switchboard()
    panel.controls["steps"].min = 0
    panel.controls["steps"].value = 0
    panel.button.click()
    assert "steps=0" in panel.error
