"""The progress table and widget reflect a real run of exercises (through check/hint/solution)."""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from course import exercises, journal
from course.__main__ import main
from course.start import tracker

ROOT = Path(__file__).resolve().parents[2]


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


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _room(home):
    """A room of one learner, ana, with one failed check on 02.did_not_move."""
    exercises.check("02.did_not_move", lambda before, after: True)
    room = home / "room"
    room.mkdir()
    shutil.copy(journal.progress_file(), room / "ana.jsonl")
    return room


def test_watch_redraws_what_the_journals_hold_now_until_ctrl_c(home):
    room = _room(home)
    out, naps = io.StringIO(), []

    def sleep(seconds):  # between frames a second learner starts; the third nap is Ctrl-C
        naps.append(seconds)
        shutil.copy(room / "ana.jsonl", room / f"ben{len(naps)}.jsonl")
        if len(naps) == 3:
            raise KeyboardInterrupt

    assert tracker.watch(room, 5, out=out, sleep=sleep) == 0
    frames = out.getvalue().split("every 5 s (Ctrl-C stops)")[1:]
    assert naps == [5, 5, 5] and len(frames) == 3
    assert "1 learner " in frames[0] and "2 learners" in frames[1] and "3 learners" in frames[2]
    assert out.getvalue().endswith("stopped watching\n")
    assert tracker.CLEAR_SCREEN not in out.getvalue()  # not a terminal: frames follow each other


def test_watch_clears_a_terminal_between_frames(home):
    room, out = _room(home), _Terminal()

    def sleep(_seconds):
        raise KeyboardInterrupt

    assert tracker.watch(room, 1, out=out, sleep=sleep) == 0
    assert out.getvalue().startswith(tracker.CLEAR_SCREEN)


def test_watch_shows_a_room_folder_that_went_missing_and_goes_on(home):
    room, out, naps = _room(home), io.StringIO(), []

    def sleep(_seconds):
        naps.append(_seconds)
        if len(naps) == 1:
            shutil.rmtree(room)
        else:
            raise KeyboardInterrupt

    assert tracker.watch(room, 2, out=out, sleep=sleep) == 0
    first, second = out.getvalue().split("every 2 s (Ctrl-C stops)")[1:]
    assert "1 learner " in first and f"no folder {room}" in second


def test_watch_of_a_missing_folder_fails_at_once(home, capsys):
    assert tracker.watch(home / "missing", 1, sleep=pytest.fail) == 2
    assert "no folder" in capsys.readouterr().err


@pytest.mark.parametrize("seconds", ["0", "-1", "3601", "1.5", "soon"])
def test_watch_takes_whole_seconds_from_1_to_3600(home, capsys, seconds):
    with pytest.raises(SystemExit) as stop:
        main(["progress", "--collect", str(home), "--watch", seconds])
    assert stop.value.code == 2
    assert f"--watch takes whole seconds from 1 to 3600, got '{seconds}'" in capsys.readouterr().err


def test_watch_needs_a_room(home, capsys):
    with pytest.raises(SystemExit):
        main(["progress", "--watch", "5"])
    assert "give it --collect DIR too" in capsys.readouterr().err


def test_ctrl_c_stops_a_real_watch_without_a_traceback(home):
    room = _room(home)
    command = [sys.executable, "-m", "course", "progress", "--collect", str(room), "--watch", "60"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    ) as watching:
        try:
            assert "every 60 s (Ctrl-C stops)" in watching.stdout.readline() + (
                watching.stdout.readline()
            )
            watching.send_signal(signal.SIGINT)
            out, err = watching.communicate(timeout=60)
        finally:
            watching.kill()
    assert watching.returncode == 0, err
    assert "Traceback" not in err and out.endswith("stopped watching\n")
