"""The progress table and widget reflect a real run of exercises (through check/hint/solution)."""

from __future__ import annotations

import shutil

import pytest
import torch

from course import exercises, journal
from course.__main__ import main
from course.start import tracker


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A private progress folder and a fresh session (no hints seen, not instructor)."""
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path / "me"))
    monkeypatch.setattr(exercises, "_HINTS_SEEN", set())
    monkeypatch.setitem(exercises._INSTRUCTOR, "on", False)
    return tmp_path


def _a_learner_session():
    """Two misses, the hint, the solution, then a pass on 00; one miss on 02."""
    exercises.check("00.on_emps", torch.ones(3))
    exercises.check("00.on_emps", [1.0])
    exercises.hint("00.on_emps")
    exercises.solution("00.on_emps")
    exercises.check("00.on_emps", torch.ones(3).to("emps"))
    exercises.check("02.did_not_move", lambda before, after: True)
    exercises.check("02.did_not_move", ...)  # not attempted: not recorded


def test_a_run_of_exercises_is_reflected_in_the_table(home, capsys):
    _a_learner_session()
    assert main(["progress"]) == 0
    out = capsys.readouterr().out
    line_00 = next(
        line for line in out.splitlines() if line.startswith("on_emps") or "00.on_emps" in line
    )
    assert "passed" in line_00 and " 3 " in line_00 and "shown" in line_00
    line_02 = next(
        line for line in out.splitlines() if "02.did_not_move" in line and "trying" in line
    )
    assert " 1 " in line_02
    assert "not started" in out  # every other exercise of the course is listed
    assert str(home / "me") in out


def test_seen_lists_only_checked_exercises(home, capsys):
    _a_learner_session()
    assert main(["progress", "--seen"]) == 0
    out = capsys.readouterr().out
    assert "not started" not in out and "00.on_emps" in out


def test_collect_summarises_a_room(home, capsys):
    _a_learner_session()
    room = home / "room"
    room.mkdir()
    shutil.copy(journal.progress_file(), room / "ana.jsonl")
    assert main(["progress", "--collect", str(room)]) == 0
    out = capsys.readouterr().out
    assert "1 learner " in out and "ana" in out and "02.did_not_move" in out
    assert main(["progress", "--collect", str(home / "missing")]) == 2


def test_the_widget_shows_the_saved_progress_and_refreshes(home):
    panel = tracker.progress_panel()
    assert "No exercise checked yet" in panel.text.value and not panel.error
    exercises.check("00.on_emps", torch.ones(3).to("emps"))
    panel.button.click()
    in_00 = sum(name.startswith("00.") for name in exercises.all_exercises())
    assert f"1/{in_00}" in panel.text.value and "No exercise checked yet" not in panel.text.value


def test_the_mystery_case_checks_are_listed_before_the_first_one(home, capsys):
    assert main(["progress"]) == 0
    out = capsys.readouterr().out
    for name in journal.CASE_CHECKS:
        line = next(line for line in out.splitlines() if name in line)
        assert "not started" in line
    panel = tracker.progress_panel()
    assert "0/3" in panel.text.value.split(">10<", 1)[-1]  # notebook 10's row: its three checks


SCRAMBLED = [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]  # notebook 07's answer to 07.predict_scramble


def _07_line(out: str) -> str:
    return next(line for line in out.splitlines() if "07.predict_scramble" in line)


def _07_done(panel) -> str:
    """Notebook 07's "done" cell in the widget's table."""
    return panel.text.value.split(">07</td>", 1)[1].split("</td>", 1)[0].rsplit(">", 1)[-1]


@pytest.mark.parametrize(
    ("answer", "status"),
    [([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], "predicted (was wrong)"), (None, "passed")],
)
def test_a_committed_prediction_is_done_right_or_wrong(home, capsys, answer, status):
    """07's scramble is judged once, at its commit: a wrong one cannot pass later, so it is done
    (and says it was wrong), never trying for ever, never stuck."""
    name = "07.predict_scramble"
    panel = tracker.progress_panel()
    assert _07_done(panel).startswith("0/")
    assert main(["progress"]) == 0
    assert "not started" in _07_line(capsys.readouterr().out)  # nothing committed yet
    answer = SCRAMBLED if answer is None else answer
    exercises.check(name, answer)
    for _ in range(journal.STUCK_ATTEMPTS):
        exercises.check(name, SCRAMBLED)  # judged again: no new attempt
    assert main(["progress"]) == 0
    line = _07_line(capsys.readouterr().out)
    assert status in line and " 1 " in line
    panel.button.click()
    assert _07_done(panel).startswith("1/")
    room = home / "room"
    room.mkdir()
    shutil.copy(journal.progress_file(), room / "ana.jsonl")
    assert main(["progress", "--collect", str(room)]) == 0
    out = capsys.readouterr().out
    assert "STUCK" not in out.split("\n\n", 1)[1] and name in out
