"""The checking engine: hidden cases run, a ready-made helper named, diagnoses asked in order."""

from __future__ import annotations

from course.exercises import engine
from course.exercises.blanks import SCAFFOLD


def _squaring(**overrides) -> engine.Checking:
    """A checker of a function that squares: three hidden cases, labelled "x=1" and so on."""
    settings = dict(
        cases=lambda: [1, 2, 3],
        run=lambda answer, case: answer(case),
        expect=lambda case: case * case,
        success=lambda n: f"right on all {n} cases",
        label=lambda case: f"x={case}",
    )
    return engine.Checking(**(settings | overrides))


def _helper(x):
    return x * x


def test_a_right_answer_passes_with_the_number_of_cases():
    verdict = _squaring()(lambda x: x * x)
    assert verdict.passed and verdict.message == "right on all 3 cases"


def test_a_miss_is_told_on_the_first_failing_case_yours_beside_the_truth():
    verdict = _squaring()(lambda x: x * x if x < 2 else 0)
    assert not verdict.passed and "on x=2 your answer disagrees" in verdict.message
    assert (verdict.yours, verdict.expected) == ("0", "4")


def test_diagnoses_speak_in_order_before_the_fallback():
    doubled = lambda trials: "you doubled" if all(t.got == 2 * t.case for t in trials) else None  # noqa: E731
    silent = lambda trials: None  # noqa: E731
    late = lambda trials: "never reached"  # noqa: E731
    verdict = _squaring(diagnoses=(silent, doubled, late))(lambda x: 2 * x)
    assert not verdict.passed and verdict.message == "you doubled"
    assert "disagrees" in _squaring(diagnoses=(silent,))(lambda x: 2 * x).message


def test_an_answer_that_raises_is_a_miss_not_a_traceback():
    verdict = _squaring()(lambda x: 1 // (x - 1))
    assert not verdict.passed and "on x=1 your answer raised ZeroDivisionError" in verdict.message
    verdict = _squaring()(lambda x: x * x if x < 3 else 1 // 0)
    assert "on x=3 your answer raised ZeroDivisionError" in verdict.message


def test_a_ready_made_helper_is_named_even_when_it_agrees():
    checking = _squaring(ready_made={"the helper": _helper})
    verdict = checking(lambda x: _helper(x))
    assert not verdict.passed and "called the helper" in verdict.message
    custom = _squaring(ready_made={"h": _helper}, borrowed=lambda used: engine.failed(f"no {used}"))
    assert custom(_helper).message == "no ('h',)"
    assert checking(lambda x: x * x).passed


def test_a_scaffold_raised_on_a_case_is_not_attempted():
    def blank(x):
        raise NotImplementedError(SCAFFOLD)

    verdict = _squaring()(blank)
    assert not verdict.attempted and "not attempted" in verdict.message


def test_the_form_is_asked_before_any_case_runs():
    ran = []
    checking = _squaring(
        form=lambda answer: None if callable(answer) else engine.failed("hand in a function"),
        run=lambda answer, case: ran.append(case),
    )
    assert checking(4).message == "hand in a function" and ran == []


def test_each_prefixes_its_finding_with_the_case_label():
    negated = engine.each(lambda t: "the sign is flipped" if t.got == -t.expected else None)
    verdict = _squaring(diagnoses=(negated,))(lambda x: -x * x if x > 1 else x * x)
    assert verdict.message == "on x=2: the sign is flipped"
    assert _squaring(diagnoses=(negated,))(lambda x: 0).message.startswith("on x=1 your answer")
