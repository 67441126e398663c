"""Every exercise: its reference passes its checker, and every known wrong answer fails."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from course import exercises, journal
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


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A private journal and a fresh session: no hint seen, not in instructor mode."""
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(exercises, "_HINTS_SEEN", set())
    monkeypatch.setitem(exercises._INSTRUCTOR, "on", False)
    return tmp_path


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
    exercises.check("02.did_not_move", ALL["02.did_not_move"].reference())
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
            "from course.exercises import Exercise, hint, passed, register, solution",
            "def reference():",
            "    return 42",
            "register(Exercise('99.both', 'p', lambda a: passed('ok'), 'HINT-TEXT', reference))",
            "hint('99.both')",
            "solution('99.both')",
        ]
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    texts = [o.get("data", {}).get("text/plain", "") for o in nb.cells[0].outputs]
    shown = "\n".join(texts)
    assert shown.count("HINT-TEXT") == 1, texts
    assert shown.count("return 42") == 1, texts


@pytest.fixture
def careful(fresh, monkeypatch):
    """A checker that catches the learner's exceptions itself, as many do per variant."""
    monkeypatch.setattr(exercises, "_REGISTRY", dict(exercises._REGISTRY))

    def checker(fn):
        try:
            return exercises.passed("ok") if fn(2) == 4 else exercises.failed("wrong", fn(2), 4)
        except Exception as exc:
            return exercises.failed(f"on 2 your function raised {type(exc).__name__}: {exc}")

    exercises.register(exercises.Exercise("99.square", "p", checker, "h", lambda: lambda x: x * x))
    return fresh


def test_the_untouched_scaffold_is_not_attempted_even_when_the_checker_catches_it(careful):
    def square(x):
        raise NotImplementedError(exercises.SCAFFOLD)

    verdict = exercises.check("99.square", square)
    assert exercises.NOT_ATTEMPTED in verdict.message and "stuck?" not in verdict.message
    assert journal.load() == []  # a blank answer is not an attempt


def test_a_real_not_implemented_error_is_a_real_failure(careful):
    def square(x):
        raise NotImplementedError("aten::pow is not implemented for 'emps'")

    verdict = exercises.check("99.square", square)
    assert not verdict.passed and exercises.NOT_ATTEMPTED not in verdict.message
    assert "aten::pow" in verdict.message
    assert exercises.check("99.square", lambda x: x * x).passed


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
