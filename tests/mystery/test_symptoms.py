"""What a user would notice, from two runs; the brief and the title in their words."""

from __future__ import annotations

import pytest

from course.mystery.case import Answer, Measured, measured
from course.mystery.generate import generate
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


def _with_oddity(family: str) -> Measured:
    """The first seed of a family whose case (its first draw) carries a decoy symptom."""
    seeds = (s for s in range(2000) if generate(s).design.family == family)
    return next(measured(s) for s in seeds if generate(s).design.oddity and measured(s).findings)


@pytest.mark.parametrize("family", ["mlp", "cnn", "attention", "bag-of-words"])
def test_a_decoy_symptom_shows_the_same_on_the_cpu_and_is_never_a_finding(family):
    """Note [Decoy symptoms]: the user's own frozen bias, in their report, never changes on the
    case's device nor on the CPU; comparing with the CPU rules it out."""
    found = _with_oddity(family)
    oddity = found.spec.design.oddity
    assert oddity and oddity.sentence in brief(found.spec.design.description, [])
    assert oddity.line in found.spec.design.source()
    assert found.buggy.moved[oddity.parameter] == found.healthy.moved[oddity.parameter] == 0.0
    assert found.buggy.norms[oddity.parameter] == found.healthy.norms[oddity.parameter]
    assert found.findings and all(oddity.parameter not in f.sentence for f in found.findings)


def test_a_decoy_comes_in_some_cases_never_where_the_bug_strikes_every_parameter():
    specs = [generate(seed) for seed in range(600)]
    with_oddity = [spec for spec in specs if spec.design.oddity]
    assert 0.15 < len(with_oddity) / len(specs) < 0.4
    assert not any("every" in s.design.hit or "number" in s.design.hit for s in with_oddity)


def test_the_instructors_answer_names_the_decoy_and_only_where_there_is_one():
    specs = [generate(seed) for seed in range(60)]
    odd = next(spec for spec in specs if spec.design.oddity)
    plain = next(spec for spec in specs if not spec.design.oddity)
    assert f"decoy: {odd.design.oddity.parameter} never changes" in str(Answer(odd))
    assert "decoy" not in str(Answer(plain))
