"""Progress that persists: every check lands in the journal, and the tables read it back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course import journal
from course.errors import CourseError
from course.journal import Event


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A private progress folder for one test (never the real home)."""
    folder = tmp_path / "progress"
    monkeypatch.setenv(journal.ENV_DIR, str(folder))
    return folder


def test_the_environment_variable_chooses_the_folder(home):
    assert journal.progress_file() == home / "progress.jsonl"


def test_default_folder_is_a_user_data_directory(monkeypatch, tmp_path):
    monkeypatch.delenv(journal.ENV_DIR, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setattr(journal.sys, "platform", "linux")
    assert journal.progress_dir() == tmp_path / "pytorch-internals-course"
    monkeypatch.setattr(journal.sys, "platform", "darwin")
    assert "Application Support" in str(journal.progress_dir())


def test_the_test_run_never_writes_to_the_real_home():
    """conftest.py points every test (and nbval's kernels) at a temporary folder."""
    assert not str(journal.progress_dir()).startswith(str(Path.home() / ".local"))


def test_record_and_load_round_trip(home):
    journal.record("04.stride", "check", passed=False)
    journal.record("04.stride", "hint")
    journal.record("04.stride", "check", passed=True)
    events = journal.load()
    assert [(e.event, e.passed) for e in events] == [
        ("check", False),
        ("hint", None),
        ("check", True),
    ]
    assert journal.hint_seen("04.stride") and not journal.hint_seen("05.other")


def test_a_prediction_is_kept_with_its_choice_and_the_first_one_counts(home):
    journal.record("06.lost_write", "predict", choice="zeros")
    journal.record("06.lost_write", "predict", choice="its old values, unchanged")
    journal.record("06.fix", "check", passed=False)
    assert journal.prediction("06.lost_write") == "zeros"
    assert journal.prediction("06.fix") is None
    lines = (home / "progress.jsonl").read_text().splitlines()
    assert "choice" not in json.loads(lines[-1])  # a check's line is as it always was


def test_a_case_check_keeps_its_seed_and_is_found_by_it(home):
    journal.record("10.culprit", "check", passed=False, case=7)
    journal.record("10.culprit", "check", passed=False, case=8)
    journal.record("10.culprit", "check", passed=True, case=7)
    journal.record("10.culprit", "hint")
    assert [e.passed for e in journal.case_checks("10.culprit", 7)] == [False, True]
    assert [e.passed for e in journal.case_checks("10.culprit", 8)] == [False]
    assert journal.case_checks("10.repro", 7) == []
    lines = (home / "progress.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["case"] == 7 and "case" not in json.loads(lines[-1])


def test_predictions_are_not_exercises_in_the_tables():
    events = _events((0, "06.lost_write", "predict", None), (1, "06.fix", "check", False))
    assert [s.exercise for s in journal.standings(events)] == ["06.fix"]
    assert [r["exercise"] for r in journal.exercise_rows({"ada": events})] == ["06.fix"]


def test_damaged_lines_are_skipped_not_fatal(home):
    home.mkdir()
    good = json.dumps({"t": 1.0, "exercise": "01.a", "event": "check", "passed": True})
    (home / "progress.jsonl").write_text(f"{good}\n{{not json\n[1, 2]\n{good[:20]}\n{good}\n")
    assert len(journal.load()) == 2


def test_an_unwritable_folder_warns_once_and_never_raises(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(journal.ENV_DIR, str(blocker / "sub"))
    monkeypatch.setitem(journal._WARNED, "write", False)
    with pytest.warns(UserWarning, match="COURSE_PROGRESS_DIR"):
        journal.record("01.a", "check", passed=True)
    journal.record("01.a", "check", passed=True)  # second time: silent


def test_unknown_event_is_refused(home):
    with pytest.raises(ValueError, match="allowed"):
        journal.record("01.a", "peek")


def _events(*spec):
    """Events from (minute, exercise, event, passed) tuples."""
    return [Event(60.0 * m, ex, ev, p) for m, ex, ev, p in spec]


def test_standing_counts_attempts_up_to_the_first_pass():
    events = _events(
        (0, "04.a", "check", False),
        (2, "04.a", "hint", None),
        (5, "04.a", "check", False),
        (9, "04.a", "check", True),
        (30, "04.a", "check", False),  # playing after passing does not undo it
    )
    s = journal.standing("04.a", events)
    assert (s.status, s.attempts, s.hints, s.solution, s.minutes) == ("passed", 3, 1, False, 9.0)


def test_trying_and_stuck():
    events = _events(*[(m, "05.b", "check", False) for m in range(journal.STUCK_ATTEMPTS)])
    s = journal.standing("05.b", events)
    quiet = s.last + journal.STUCK_QUIET_MINUTES * 60
    assert s.status == "trying" and journal.stuck(s, now=quiet)
    assert not journal.stuck(s, now=quiet - 1)  # a try in the last minutes: still iterating
    assert not journal.stuck(journal.standing("05.b", events[:1]), now=quiet)
    assert journal.standing("05.c", events).status == "not started"


def test_checks_saved_under_a_name_later_committed_as_a_prediction_do_not_count():
    """Journals from before 07.predict_scramble became a prediction hold checks under it."""
    events = _events(
        (0, "07.p", "check", False),
        (1, "07.p", "check", False),
        (2, "07.p", "check", False),
        (3, "07.p", "predict", None),
        (4, "07.k", "check", False),
    )
    assert [s.exercise for s in journal.standings(events)] == ["07.k"]
    assert journal.standing("07.p", events).status == "not started"
    rows = journal.exercise_rows({"ada": events}, now=600.0)
    assert [r["exercise"] for r in rows] == ["07.k"]


def test_progress_table_groups_by_notebook_and_lists_known_exercises():
    events = _events((0, "04.a", "check", True), (1, "05.b", "check", False))
    text = journal.progress_table(events, known=["04.a", "04.z", "05.b"])
    assert "notebook 04" in text and "notebook 05" in text
    summary = journal.notebook_rows(events, known=["04.a", "04.z", "05.b"])
    assert summary[0] == {
        "notebook": "04",
        "done": "1/2",
        "trying": "-",
        "hints": 0,
        "minutes": 0.0,
    }
    assert summary[1]["trying"] == "05.b"
    assert "not started" in text  # 04.z
    assert "No progress recorded yet" in journal.progress_table([])


def _write(path: Path, events: list[Event]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"t": e.t, "exercise": e.exercise, "event": e.event, "passed": e.passed})
        for e in events
    ]
    path.write_text("\n".join(lines) + "\n")


def test_collect_reads_both_layouts_and_names_who_is_stuck(tmp_path):
    stuck = [(m, "04.a", "check", False) for m in range(4)]
    _write(tmp_path / "ana.jsonl", _events((0, "04.a", "check", True), (3, "05.b", "check", False)))
    _write(tmp_path / "ben" / ".local/share/x/progress.jsonl", _events(*stuck))
    _write(tmp_path / "cy.jsonl", [])
    files = journal.learner_files(tmp_path)
    assert sorted(files) == ["ana", "ben", "cy"]
    text = journal.collect_table(tmp_path, now=600.0)
    assert text.startswith("3 learners")
    rows = {
        r["learner"]: r for r in journal.class_rows({n: journal.load(p) for n, p in files.items()})
    }
    assert rows["ben"]["stuck"] == "STUCK" and rows["ben"]["working on"] == "04.a"
    assert rows["ana"]["working on"] == "05.b" and rows["ana"]["done"] == 1
    assert rows["cy"]["working on"] == "-"
    by_exercise = {
        r["exercise"]: r
        for r in journal.exercise_rows({n: journal.load(p) for n, p in files.items()})
    }
    assert by_exercise["04.a"] == {
        "exercise": "04.a",
        "passed": 1,
        "solution shown": 0,
        "trying": 1,
        "stuck": "ben",
    }


def test_a_learner_iterating_right_now_is_not_stuck_and_idle_reads_as_people_say_it():
    fails = _events(*[(m, "04.a", "check", False) for m in range(4)])
    iterating = {r["learner"]: r for r in journal.class_rows({"ada": fails}, now=60.0 * 4)}
    assert iterating["ada"]["stuck"] == "" and iterating["ada"]["idle"] == "1 min"
    later = journal.class_rows({"ada": fails}, now=60.0 * (3 + journal.STUCK_QUIET_MINUTES))
    assert later[0]["stuck"] == "STUCK"
    assert [journal.idle_text(m) for m in (5, 90, 60 * 50, 60 * 24 * 9, 527690)] == [
        "5 min",
        "2 h",
        "2 d",
        "9 d",
        "> 30 d",
    ]


def test_the_room_shows_solutions_shown_predictions_and_each_learners_case():
    events = [
        *_events((0, "04.a", "check", False), (1, "04.a", "hint", None)),
        *_events((2, "04.a", "solution", None), (3, "04.a", "check", True)),
        Event(240.0, "04.clone_layout", "predict", choice="transposed"),
        Event(300.0, "10.repro", "check", False, case=1234567),
    ]
    (row,) = journal.class_rows({"ada": events}, now=600.0)
    assert (row["solutions"], row["predictions"], row["case"]) == (1, 1, 1234567)
    by_exercise = {r["exercise"]: r for r in journal.exercise_rows({"ada": events}, now=600.0)}
    assert by_exercise["04.a"]["solution shown"] == 1 and by_exercise["04.a"]["passed"] == 1


def test_collect_from_a_missing_folder_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no folder"):
        journal.collect_table(tmp_path / "nope")
    assert "No progress files" in journal.collect_table(tmp_path)


@pytest.mark.parametrize("value", ["", "  ", "a file"])
def test_a_progress_folder_set_empty_or_to_a_file_says_what_is_wrong(monkeypatch, tmp_path, value):
    if value == "a file":
        value = str(tmp_path / "progress.jsonl")
        (tmp_path / "progress.jsonl").write_text("")
    monkeypatch.setenv(journal.ENV_DIR, value)
    with pytest.raises(CourseError, match="COURSE_PROGRESS_DIR"):
        journal.load()
    with pytest.warns(UserWarning, match="progress is not being saved"):
        monkeypatch.setitem(journal._WARNED, "write", False)
        journal.record("04.address", "check", passed=True)  # a check never breaks on it
