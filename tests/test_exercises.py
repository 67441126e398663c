"""Every exercise: its reference passes its checker, and every known wrong answer fails."""

from __future__ import annotations

import pytest

from course import exercises
from course.errors import CourseError

ALL = exercises.all_exercises()


@pytest.mark.parametrize("name", sorted(ALL))
def test_reference_solution_passes(name):
    verdict = exercises.check(name, ALL[name].reference())
    assert verdict.passed, str(verdict)


@pytest.mark.parametrize("name", sorted(ALL))
def test_wrong_answers_fail_with_a_message(name):
    wrong = ALL[name].wrong_answers
    assert wrong, f"{name} has no plausible wrong answer to reject"
    for answer in wrong:
        verdict = exercises.check(name, answer())
        assert not verdict.passed, f"{name} accepted a wrong answer"
        assert verdict.message.strip()


def test_every_notebook_after_the_first_has_exercises():
    prefixes = {name.split(".")[0] for name in ALL}
    assert prefixes >= {f"{i:02d}" for i in range(0, 9)}


def test_unattempted_and_crashing_answers_are_explained():
    assert "not attempted" in exercises.check("02.did_not_move", ...).message

    def crashes(before, after):
        raise KeyError("oops")

    assert "raised KeyError" in exercises.check("02.did_not_move", crashes).message


def test_solution_needs_the_hint_first_unless_instructor():
    exercises.instructor_mode(False)
    exercises._HINTS_SEEN.discard("02.did_not_move")
    assert "hint first" in exercises.solution("02.did_not_move")
    assert "Hint for" in exercises.hint("02.did_not_move")
    assert "torch.equal" in exercises.solution("02.did_not_move")
    with pytest.raises(CourseError, match="instructors"):
        exercises.reveal_all()
    exercises.instructor_mode(True)
    try:
        assert all(name in exercises.reveal_all() for name in ALL)
    finally:
        exercises.instructor_mode(False)


def test_unknown_exercise_lists_the_known_ones():
    with pytest.raises(CourseError, match="known exercises"):
        exercises.check("99.nope", 1)


@pytest.fixture
def coin(monkeypatch):
    """A registered prediction whose experiment always says "heads"; forgotten afterwards."""
    monkeypatch.setattr(exercises, "_PREDICTIONS", {})
    monkeypatch.setattr(exercises, "_PREDICTED", {})
    monkeypatch.setitem(exercises._INSTRUCTOR, "on", False)
    calls = []

    def outcome():
        calls.append(1)
        return "heads"

    exercises.register_prediction(
        exercises.Prediction("99.coin", "Heads or tails?", ("heads", "tails"), outcome, "Rigged.")
    )
    return calls


def test_reveal_asks_for_a_prediction_first_and_runs_nothing(coin):
    assert "Commit first" in exercises.reveal("99.coin")
    assert coin == []


def test_prediction_is_compared_with_the_experiment(coin):
    assert "recorded" in exercises.predict("99.coin", "tails")
    text = exercises.reveal("99.coin")
    assert "You predicted 'tails'; the experiment says 'heads'" in text and "Rigged." in text
    exercises.predict("99.coin", "heads")
    assert "right" in exercises.reveal("99.coin")


def test_bad_prediction_names_the_choices(coin):
    with pytest.raises(CourseError, match="'edge' is not one of the choices.*heads"):
        exercises.predict("99.coin", "edge")
    with pytest.raises(CourseError, match="no prediction named '99.dice'"):
        exercises.predict("99.dice", "six")
    assert "No prediction yet" in exercises.predict("99.coin", ...)


def test_instructor_mode_reveals_without_a_prediction(coin, monkeypatch):
    monkeypatch.setitem(exercises._INSTRUCTOR, "on", True)
    assert "(instructor mode) the experiment says 'heads'" in exercises.reveal("99.coin")
