"""Under nbgrader's autograder a check prints its verdict and returns the points earned."""

from __future__ import annotations

import pytest

from course import exercises, journal
from course.exercises import grading
from tests.corpus import reference

NAME = "02.did_not_move"


def test_points_come_from_minutes_at_least_one():
    assert [grading.points(m) for m in (1, 5, 8, 10, 30)] == [1, 1, 2, 2, 6]


def test_a_score_is_full_points_less_after_a_shown_solution(monkeypatch):
    monkeypatch.delenv(grading.CREDIT_ENV, raising=False)
    assert grading.score(False, 10, False) == 0.0
    assert grading.score(True, 10, False) == 2.0
    assert grading.score(True, 10, True) == 1.0
    monkeypatch.setenv(grading.CREDIT_ENV, "0.25")
    assert repr(grading.score(True, 10, True)) == "0.5"


@pytest.mark.parametrize(("raw", "share"), [("", 0.5), ("0", 0.0), ("0.25", 0.25), ("1", 1.0)])
def test_the_solution_credit_is_read_from_the_environment(monkeypatch, raw, share):
    monkeypatch.setenv(grading.CREDIT_ENV, raw)
    assert grading.solution_credit() == share


@pytest.mark.parametrize("raw", ["half", "1.5", "-0.1", "nan"])
def test_a_bad_solution_credit_is_refused(monkeypatch, raw):
    monkeypatch.setenv(grading.CREDIT_ENV, raw)
    with pytest.raises(ValueError, match=grading.CREDIT_ENV):
        grading.solution_credit()


def test_check_under_the_autograder_prints_and_returns_the_points(fresh, monkeypatch, capsys):
    monkeypatch.chdir(fresh)
    monkeypatch.setenv(grading.GRADING_ENV, "1")
    monkeypatch.delenv(grading.CREDIT_ENV, raising=False)
    monkeypatch.setattr(exercises, "_SOLUTIONS_SHOWN", set())
    full = grading.points(exercises.get(NAME).minutes)
    assert exercises.check(NAME, reference(NAME)) == full
    assert "[PASSED]" in capsys.readouterr().out
    assert exercises.check(NAME, lambda before, after: True) == 0
    assert "[NOT YET]" in capsys.readouterr().out
    exercises._SOLUTIONS_SHOWN.add(NAME)
    assert exercises.check(NAME, reference(NAME)) == full * grading.DEFAULT_CREDIT
    assert journal.load() == []  # the instructor's machine keeps no journal


def test_a_journal_submitted_beside_the_notebook_tells_a_shown_solution(tmp_path, monkeypatch):
    assert not grading.submitted_journal_shows(NAME, tmp_path)  # no journal at all
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    journal.record(NAME, "hint")
    assert not grading.submitted_journal_shows(NAME, tmp_path)
    journal.record(NAME, "solution")
    assert grading.submitted_journal_shows(NAME, tmp_path)
    assert not grading.submitted_journal_shows("02.adam_state", tmp_path)
