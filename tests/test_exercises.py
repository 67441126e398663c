"""The exercise machinery: checks, blanks, hints, solutions, predictions, one lesson at a time.

Each exercise's reference and wrong answers are run by tests/test_corpora.py and the lessons'
tests; here the shared behaviour every exercise relies on."""

from __future__ import annotations

import nbformat
import pytest
import torch
from nbclient import NotebookClient

from course import exercises, journal
from course.errors import CourseError
from course.exercises import registry
from tests.corpus import reference
from tests.exercises import conftest
from tests.known_failures import listed

ALL = exercises.all_exercises()

# The session fixtures, shared with the mirrored tests in tests/exercises/.
fresh, careful = conftest.fresh, conftest.careful


# "Which of these" questions still checked like exercises (issue 24): each becomes a Prediction.
PICKS: set[str] = set()


@pytest.mark.parametrize("name", listed(sorted(ALL), PICKS, "a pick checked like an exercise"))
def test_a_check_is_not_a_pick_from_a_short_list(name):
    """A check may be retried until it passes, so one label or number as its answer would pass
    any guess after a few tries: such a question is a Prediction (committed once)."""
    answer = reference(name)
    label = isinstance(answer, str) and "\n" not in answer and len(answer) <= 40
    assert not (label or isinstance(answer, bool | int)), (
        f"{name}'s answer is the pick {answer!r}: ask it with register_prediction, not check"
    )


def test_every_notebook_after_the_first_has_exercises():
    prefixes = {name.split(".")[0] for name in ALL}
    assert prefixes >= {f"{i:02d}" for i in range(0, 9)}


def test_unattempted_and_crashing_answers_are_explained():
    assert "not attempted" in exercises.check("02.did_not_move", ...).message

    def crashes(before, after):
        raise KeyError("oops")

    assert "raised KeyError" in exercises.check("02.did_not_move", crashes).message


def test_solution_needs_the_hint_first_unless_instructor(fresh):
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


def test_the_advice_runs_in_a_cell_that_imported_nothing(fresh):
    """Notebooks need not import hint/solution: the checker's advice line carries the import."""
    message = exercises.check("02.did_not_move", lambda before, after: True).message
    line = message.split("stuck? run:", 1)[1].strip()
    assert line == "from course.exercises import hint; hint('02.did_not_move')"
    namespace: dict = {}
    exec(line, namespace)  # a fresh namespace: nothing imported
    assert exercises._hint_seen("02.did_not_move")
    follow_up = exercises.hint("02.did_not_move").rsplit("still stuck? run:", 1)[1].strip()
    exec(follow_up, {})
    assert "torch.equal" in exercises.solution("02.did_not_move")


def test_every_check_hint_and_solution_is_journaled(fresh):
    exercises.check("02.did_not_move", ...)  # not attempted: nothing to record
    exercises.check("02.did_not_move", lambda before, after: True)
    exercises.hint("02.did_not_move")
    exercises.solution("02.did_not_move")
    exercises.check("02.did_not_move", reference("02.did_not_move"))
    events = [(e.event, e.passed) for e in journal.load()]
    assert events == [("check", False), ("hint", None), ("solution", None), ("check", True)]


def test_a_restarted_kernel_keeps_the_unlocked_solution(fresh, monkeypatch):
    exercises.hint("02.did_not_move")
    monkeypatch.setattr(exercises, "_HINTS_SEEN", set())  # a new kernel: memory forgotten
    assert "torch.equal" in exercises.solution("02.did_not_move")
    assert "stuck?" not in exercises.check("02.did_not_move", lambda b, a: True).message


def test_hint_and_solution_in_one_cell_both_show_once_each(tmp_path):
    """Run in a real kernel: display, not only return, and no second copy of the last one."""
    cell = "\n".join(
        [
            "from course.exercises import Exercise, hint, instructor_mode, passed, register",
            "from course.exercises import solution",
            "register(Exercise('99.both', 'p', lambda a: passed('ok'), 'HINT-TEXT', 2))",
            "instructor_mode(True)",
            "hint('99.both')",
            "solution('99.both')",
        ]
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    texts = [o.get("data", {}).get("text/plain", "") for o in nb.cells[0].outputs]
    shown = "\n".join(texts)
    assert shown.count("HINT-TEXT") == 1, texts
    assert shown.count("No solution to show for 99.both") == 1, texts


def test_none_is_a_wrong_answer_that_says_where_none_comes_from(careful):
    """A function that prints instead of returning hands in None: an attempt, told so."""
    for _ in range(2):
        verdict = exercises.check("99.square", None)
        assert verdict.attempted and not verdict.passed
        assert "prints its result instead of returning" in verdict.message
        assert verdict.message.count("stuck?") == 1
    assert [e.passed for e in journal.load()] == [False, False]


def test_unknown_exercise_lists_its_lessons_exercises():
    with pytest.raises(CourseError, match="lesson 02's exercises: 02.adam_state"):
        exercises.check("02.nope", 1)
    with pytest.raises(CourseError, match="not an exercise name"):
        exercises.check("99.nope", 1)


@pytest.fixture
def coin(fresh, monkeypatch):
    """A registered prediction whose experiment always says "heads"; forgotten afterwards."""
    monkeypatch.setattr(registry, "_PREDICTIONS", {})
    monkeypatch.setattr(exercises, "_PREDICTED", {})
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


def test_a_prediction_is_committed_once(coin):
    first = exercises.predict("99.coin", "tails")
    assert exercises.predict("99.coin", "tails") == first  # the same choice again: same answer
    exercises.reveal("99.coin")
    second = exercises.predict("99.coin", "heads")  # the learner now knows the outcome
    assert "already committed to 'tails'" in second
    assert "You predicted 'tails'" in exercises.reveal("99.coin")
    assert [(e.event, e.choice) for e in journal.load()] == [("predict", "tails")]


def test_a_prediction_survives_a_kernel_restart(coin, monkeypatch):
    exercises.predict("99.coin", "heads")
    monkeypatch.setattr(exercises, "_PREDICTED", {})  # a new kernel: memory forgotten
    assert "You predicted 'heads'" in exercises.reveal("99.coin")
    assert "already committed to 'heads'" in exercises.predict("99.coin", "tails")


def test_a_prediction_is_not_an_attempt(coin):
    exercises.predict("99.coin", "heads")
    assert journal.standings(journal.load()) == []  # the progress tables count exercises only


@pytest.mark.parametrize("choice", ["edge", "Heads", 1, ["heads"], torch.tensor(1.0)])
def test_an_off_list_choice_is_not_yet_never_a_traceback(coin, choice):
    verdict = exercises.predict("99.coin", choice)
    assert isinstance(verdict, exercises.Verdict) and not verdict.passed
    assert str(verdict).startswith("[NOT YET]") and "'heads', 'tails'" in str(verdict)
    assert exercises.committed("99.coin") is None and journal.load() == []


def test_an_unknown_prediction_lists_the_known_ones(coin):
    with pytest.raises(CourseError, match="no prediction named '02.dice'; lesson 02's predictions"):
        exercises.predict("02.dice", "six")
    assert "No prediction yet" in exercises.predict("99.coin", ...)


def test_explanations_are_wrapped_to_the_cell(coin):
    long = " ".join(["word"] * 60) + "\n\nSecond paragraph,\nwrapped by hand."
    exercises.register_prediction(
        exercises.Prediction("99.long", "Long?", ("yes", "no"), lambda: "yes", long)
    )
    exercises.predict("99.long", "yes")
    text = exercises.reveal("99.long")
    assert max(len(line) for line in text.splitlines()) <= exercises.TEXT_WIDTH
    assert text.endswith("\n\nSecond paragraph, wrapped by hand.")


def test_instructor_mode_reveals_without_a_prediction(coin, monkeypatch):
    monkeypatch.setitem(exercises._INSTRUCTOR, "on", True)
    assert "(instructor mode) the experiment says 'heads'" in exercises.reveal("99.coin")
