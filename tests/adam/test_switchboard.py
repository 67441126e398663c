"""The switchboard widget around the four outcomes (measured in test_switchboard_cases.py)."""

from __future__ import annotations

import pytest

from course.adam.switchboard import switchboard
from course.adam.switchboard_cases import MAX_CASE_STEPS, RUN, outcomes
from course.errors import CourseError
from course.ui import BUSY


@pytest.fixture(scope="module")
def results():
    """The four outcomes, run once, so the widget's cases are cached."""
    return {o.case.label: o for o in outcomes()}


def test_widget_runs_on_button_not_on_toggle(results):
    panel = switchboard()
    assert panel.error == "" and "both" in panel.text.value
    before = panel.text.value
    panel.controls["addcdiv_broken"].value = False  # no redraw until Run
    assert panel.text.value == before
    panel.button.click()
    assert "addcmul_ only" in panel.text.value and "explodes" in panel.text.value
    assert panel.image.value


def test_widget_after_the_steps_slider_moves_to_one():
    panel = switchboard()
    panel.controls["steps"].value = 1
    panel.button.click()
    assert panel.error == "" and panel.image.value
    assert "at 1 steps" in panel.text.value or "1 steps" in panel.text.value


@pytest.mark.parametrize(
    ("typed", "why"), [("500", "above 200"), ("0", "below 1"), ("ten", "not a number")]
)
def test_widget_says_when_typed_steps_are_refused(typed, why):
    """Issue 38: the steps box turned 500 into 60 without a word. Its range is what a case
    trains (1 to MAX_CASE_STEPS); beyond it the panel says what was typed, and Run still
    trains the steps it shows."""
    panel = switchboard()
    steps = panel.controls["steps"]
    assert (steps.low, steps.high) == (1, MAX_CASE_STEPS)
    before = panel.text.value
    steps.box.value = typed
    assert f"you typed &#x27;{typed}&#x27;, which is {why}" in panel.message.value
    assert steps.value == RUN["steps"] and panel.text.value == before
    with pytest.raises(CourseError, match=f"steps={MAX_CASE_STEPS + 1} is not allowed"):
        steps.value = MAX_CASE_STEPS + 1


def test_widget_training_shows_progress_and_disables_its_controls(monkeypatch):
    from course.adam import switchboard_cases as cases

    seen = []
    real = cases._train

    def watched(case, steps, lr, batch_size, progress=None):
        panel = holder[0]
        seen.append((panel.button.disabled, panel.status.value))
        return real(case, steps, lr, batch_size, progress)

    holder = [switchboard()]
    monkeypatch.setattr(cases, "_train", watched)
    holder[0].controls["steps"].value = 3
    holder[0].button.click()
    assert seen and seen[0][0] is True and "Training &#x27;both&#x27; for 3 steps" in seen[0][1]
    assert holder[0].button.disabled is False and holder[0].status.value == ""


def test_a_case_already_run_shows_a_status_before_its_figure(results, monkeypatch):
    """No training to report, but drawing four panels still takes seconds: say so at once."""
    from course.adam import switchboard as board

    panel = switchboard()
    seen = []
    real = board.outcome_figure

    def watched(*args, **kwargs):
        seen.append(panel.status.value)
        return real(*args, **kwargs)

    monkeypatch.setattr(board, "outcome_figure", watched)
    panel.controls["addcmul_broken"].value = False
    panel.button.click()
    assert seen and BUSY in seen[0] and panel.status.value == ""
