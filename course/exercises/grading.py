"""Homework graded by nbgrader: a check that scores instead of only telling.

nbgrader's autograder re-runs a submitted notebook in a clean kernel and reads each autograded
cell's result: an error scores nothing, a number is the points earned (partial credit), anything
else scores full marks. `check(...)` never raises (a learner must be able to run on), so under
the autograder (`COURSE_GRADING=1` in its environment, set by scripts/grading.py) it prints its
verdict and returns the points instead: the exercise's points when it passes, nothing when it
does not, and `COURSE_SOLUTION_CREDIT` of them (default 0.5) when the learner was shown the
reference solution first. Points come from the exercise's minutes, so a longer exercise weighs
more; the instructor's grading script writes the same points into the notebook's metadata.

A shown solution is known from the session (a `solution(...)` run in the submitted notebook) or
from a `progress.jsonl` journal submitted beside the notebook.
"""

from __future__ import annotations

import os
from pathlib import Path

from course import journal

GRADING_ENV = "COURSE_GRADING"
CREDIT_ENV = "COURSE_SOLUTION_CREDIT"
DEFAULT_CREDIT = 0.5
MINUTES_PER_POINT = 5


def grading() -> bool:
    """Whether this kernel runs under the instructor's autograder."""
    return os.environ.get(GRADING_ENV, "") not in ("", "0")


def points(minutes: int) -> int:
    """An exercise's points: one per five minutes of work, at least one."""
    return max(1, round(minutes / MINUTES_PER_POINT))


def solution_credit() -> float:
    """The share of an exercise's points a pass earns after its solution was shown."""
    raw = os.environ.get(CREDIT_ENV, "")
    try:
        share = float(raw) if raw else DEFAULT_CREDIT
    except ValueError:
        share = -1.0
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"{CREDIT_ENV} must be a number from 0 to 1, got {raw!r}")
    return share


def submitted_journal_shows(name: str, folder: Path | None = None) -> bool:
    """Whether a journal submitted beside the notebook records the solution of `name` shown."""
    path = (folder or Path.cwd()) / journal.FILENAME
    if not path.is_file():
        return False
    return any(e.exercise == name and e.event == "solution" for e in journal.load(path))


class Score(float):
    """Points earned, shown as a bare number: what nbgrader reads as partial credit."""

    def __repr__(self) -> str:
        return f"{float(self):g}"


def score(passed: bool, minutes: int, solution_shown: bool) -> Score:
    """The points one check earns under the autograder."""
    if not passed:
        return Score(0.0)
    share = solution_credit() if solution_shown else 1.0
    return Score(points(minutes) * share)
