"""What a user would notice, from two runs; the brief and the title in their words."""

from __future__ import annotations

from course.mystery.scenarios import ScenarioReport
from course.mystery.symptoms import brief, observe, title


def _run(losses, metric, moved, task="classify"):
    return ScenarioReport("emps:0", task, losses, metric, moved, {})


HEALTHY = _run([1.0, 0.5, 0.2], 0.9, {"a": 1.0, "b": 1.0})


def test_a_healthy_run_shows_nothing():
    assert observe(HEALTHY, HEALTHY) == []
    assert title([]) == "Something is off"


def test_a_nan_a_frozen_and_a_half_frozen_parameter_are_each_reported():
    (nan,) = observe(_run([1.0, float("nan"), float("nan")], 0.9, {"a": 1, "b": 1}), HEALTHY)
    assert nan.sentence == "the loss is NaN at step 2" and nan.title == "NaN loss at step 2"
    kinds = [f.kind for f in observe(_run([1.0, 0.9, 0.8], 0.5, {"a": 0.0, "b": 0.4}), HEALTHY)]
    assert kinds == ["frozen", "partial", "accuracy"]


def test_a_regression_reports_how_many_times_worse_it_fits():
    healthy = _run([1.0, 0.1], 0.1, {"a": 1.0}, "regress")
    (worse,) = observe(_run([1.0, 0.5], 0.7, {"a": 1.0}, "regress"), healthy)
    assert worse.sentence == "the held-out loss ends 7 times as high as on a CPU"
    assert worse.title == "A fit 7x worse"


def test_the_brief_is_the_users_description_then_what_they_saw():
    findings = observe(_run([1.0, 0.9, 0.8], 0.9, {"a": 0.0, "b": 1.0}), HEALTHY)
    text = brief("I train a model.", findings)
    assert text.startswith("I train a model. On the emulated Mac, a never changes")
    assert "same script on a CPU trains as expected" in text
