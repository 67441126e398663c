"""Homework graded with nbgrader, end to end: a real course directory, three made-up students.

scripts/grading.py writes nbgrader's source from the reference notebook; `nbgrader
generate_assignment` releases it (the learner copy's cells, a check that shared a cell with its
answer split off); each submission is the release filled in as a student would; `nbgrader
autograde` re-runs it in a clean kernel with COURSE_GRADING=1 and the gradebook holds the scores.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course import journal
from course.exercises import get
from course.exercises.grading import points
from course.exercises.solutions import without_markers

nbgrader_api = pytest.importorskip("nbgrader.api", reason="nbgrader is the `.[teach]` extra")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import grading  # noqa: E402 (scripts/grading.py)
import make_learner_copies  # noqa: E402

LESSON = "00_start_here"
NBGRADER = Path(sys.executable).with_name("nbgrader")
WRONG = {  # what a student who got it wrong typed, by the answer cell's id
    "start-08": "my_tensor = torch.ones(3)",
    "start-10": "def device_type(t):\n    return str(t.device)",
}


def _nbgrader(course: Path, *args: str, grading_on: bool = False) -> None:
    env = {**os.environ, "COURSE_GRADING": "1" if grading_on else ""}
    env["PATH"] = f"{NBGRADER.parent}{os.pathsep}{env.get('PATH', '')}"  # nbgrader runs alembic
    result = subprocess.run(
        [str(NBGRADER), *args], cwd=course, env=env, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _source_cells() -> dict[str, str]:
    reference = json.loads((ROOT / "notebooks" / f"{LESSON}.ipynb").read_text())
    cells = grading.source_notebook(reference, LESSON)["cells"]
    return {c["id"]: "".join(c["source"]) for c in cells}


def _submit(course: Path, student: str, answers: dict[str, str], shown: tuple[str, ...] = ()):
    """The released notebook with `answers` typed into the cells of those ids."""
    release = course / "release" / LESSON / f"{LESSON}.ipynb"
    notebook = json.loads(release.read_text())
    for cell in notebook["cells"]:
        if cell.get("id") in answers:
            cell["source"] = answers[cell["id"]]
    folder = course / "submitted" / student / LESSON
    folder.mkdir(parents=True)
    (folder / f"{LESSON}.ipynb").write_text(json.dumps(notebook))
    (folder / "timestamp.txt").write_text("2026-12-07 10:00:00.000000 UTC")
    for name in shown:  # the student's journal, handed in beside the notebook
        line = {"t": 1.0, "exercise": name, "event": "solution"}
        (folder / journal.FILENAME).write_text(json.dumps(line) + "\n")


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("nbgrader-course")
    grading.write_course(root, [LESSON])
    _nbgrader(root, "generate_assignment", LESSON, "--force")
    solved = {i: without_markers(s) for i, s in _source_cells().items() if "BEGIN SOLUTION" in s}
    _submit(root, "all-done", solved)
    _submit(root, "half-done", {"start-08": solved["start-08"]})
    _submit(root, "one-wrong", {**solved, "start-10": WRONG["start-10"]})
    _submit(root, "read-a-solution", solved, shown=("00.device_type",))
    _nbgrader(root, "autograde", LESSON, "--create", "--force", grading_on=True)
    return root


def test_the_release_holds_the_learner_copys_cells(course):
    release = json.loads((course / "release" / LESSON / f"{LESSON}.ipynb").read_text())
    learner = json.loads((ROOT / "learner" / f"{LESSON}.ipynb").read_text())
    released = {}
    for cell in release["cells"]:  # a split-off check goes back to the cell it came from
        key = cell["id"].removesuffix("-check")
        released[key] = "\n".join(p for p in (released.get(key), "".join(cell["source"])) if p)
    assert list(released) == [c["id"] for c in learner["cells"]]
    for cell in learner["cells"]:  # the same code; blank lines at a split are not kept
        assert _lines(released[cell["id"]]) == _lines("".join(cell["source"])), cell["id"]
    text = json.dumps(release)
    assert "BEGIN SOLUTION" not in text and 'torch.ones(3).to("emps")' not in text


def test_the_gradebook_scores_each_student(course):
    on_emps, device_type = (points(get(n).minutes) for n in ("00.on_emps", "00.device_type"))
    expected = {
        "all-done": on_emps + device_type,
        "half-done": on_emps,
        "one-wrong": on_emps,
        "read-a-solution": on_emps + 0.5 * device_type,
    }
    with nbgrader_api.Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {s: gradebook.find_submission(LESSON, s).score for s in expected}
        assert gradebook.find_assignment(LESSON).max_score == on_emps + device_type
    assert scores == expected


def test_every_graded_lesson_becomes_a_valid_source(tmp_path):
    """Every lesson with checks: each check a test cell with its points, answers never locked."""
    lessons = grading.graded_lessons()
    grading.write_course(tmp_path, lessons)
    for lesson in lessons:
        cells = json.loads((tmp_path / "source" / lesson / f"{lesson}.ipynb").read_text())["cells"]
        meta = [c["metadata"].get("nbgrader") for c in cells]
        tests = [m for m in meta if m and m["grade"]]
        assert tests and all(m["locked"] and m["points"] >= 1 for m in tests), lesson
        assert all(not m["locked"] for m in meta if m and m["solution"]), lesson
    assert shutil.which("nbgrader") or NBGRADER.exists()
    assert cells[0]["id"] == make_learner_copies.SETUP_CELL_ID
