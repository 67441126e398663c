"""The four switchboard outcomes, measured on the emulated device, as data (no widget)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from course.adam.switchboard_cases import (
    CASES,
    MAX_CASE_STEPS,
    classify,
    find_case,
    outcome_figure,
    outcome_table,
    outcomes,
    run_case,
)
from course.errors import CourseError
from course.figures import figure_png


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


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"steps": 0}, "steps=0"),
        ({"steps": True}, "steps=True"),
        ({"steps": 10**6}, "steps=1000000 .*from 1 to 200"),
        ({"batch_size": 10**7}, "batch_size=10000000"),
        ({"lr": 0.0}, "lr=0.0"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(CourseError, match=match):
        run_case(CASES[0], **kwargs)


def test_cases_by_label(results):
    assert run_case("no bug") is results["no bug"]
    with pytest.raises(CourseError, match="case='no-bug' .*'addcmul_ only'"):
        run_case("no-bug")


def test_one_step_draws_one_panel_that_fits_the_notebook():
    fig = outcome_figure([run_case("both", steps=1)])
    assert len(fig.axes) == 1
    assert fig.get_figwidth() * 90 <= 950  # the widget's dpi, the notebook's cell width
    assert all(float(t).is_integer() for t in fig.axes[0].get_xticks())


@pytest.mark.parametrize("steps", [60, MAX_CASE_STEPS])
def test_the_figure_of_a_long_run_keeps_few_step_ticks(results, steps):
    """Ten two-digit labels in a quarter of the figure collided; measured data, longer runs."""
    longer = [
        replace(o, encoder_change=o.encoder_change * math.ceil(steps / len(o.encoder_change)))
        for o in results.values()
    ]
    fig = outcome_figure([replace(o, encoder_change=o.encoder_change[:steps]) for o in longer])
    figure_png(fig)
    for ax in fig.axes:
        ticks = [t for t in ax.get_xticks() if 0.5 <= t <= steps + 0.5]
        assert 1 <= len(ticks) <= 5 and all(float(t).is_integer() for t in ticks), ticks
