"""Reference solutions, read from the marked regions of the lesson's reference notebook."""

from __future__ import annotations

import json

import pytest

from course import catalog
from course.errors import CourseError
from course.exercises import solutions
from course.exercises.solutions import BEGIN, END

CELLS = [
    "import torch",
    f"def area(w, h):\n    {BEGIN}\n    return w * h\n    {END}",
    f"{BEGIN}\nscale = 3\n{END}\nunrelated = 1",
    "check('04.area', area)",
    "check('04.scale', scale)",
    "print('no check here')",
]


@pytest.fixture
def folder(tmp_path):
    """A tiny lesson 04 reference notebook in a folder of its own."""
    cells = [{"cell_type": "code", "source": c, "metadata": {}, "outputs": []} for c in CELLS]
    cells.insert(0, {"cell_type": "markdown", "source": "check('04.area', nothing)"})
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / catalog.LESSONS[4].filename).write_text(json.dumps(notebook))
    return tmp_path


def test_a_def_region_is_found_with_its_cell_shown_without_markers(folder):
    found = solutions.find("04.area", folder=folder)
    assert found.regions == ("    return w * h",) and found.answer == "area"
    assert found.text == "def area(w, h):\n    return w * h"


def test_a_top_level_region_is_found(folder):
    found = solutions.find("04.scale", folder=folder)
    assert found.regions == ("scale = 3",)
    assert found.text == "scale = 3\nunrelated = 1"


def test_a_name_without_a_check_cell_is_told(folder):
    with pytest.raises(CourseError, match=r"no check\('04.missing', \.\.\.\) cell"):
        solutions.find("04.missing", folder=folder)


def test_a_real_lesson_solution_is_read_from_the_notebooks():
    assert "def address(" in solutions.find("04.address").text


def test_without_markers_keeps_everything_but_the_marker_lines():
    cell = f"x = 1\n    {BEGIN}\ny = 2\n{END}  \nz = 3"
    assert solutions.without_markers(cell) == "x = 1\ny = 2\nz = 3"


def test_a_student_release_has_no_solution_to_show(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_SOLUTIONS", str(tmp_path / "nowhere"))
    monkeypatch.setattr(catalog, "NOTEBOOK_DIR", tmp_path / "absent")
    assert solutions.notebook_dir() is None
    with pytest.raises(CourseError, match="student release"):
        solutions.find("04.address")
    monkeypatch.setattr(solutions, "notebook_dir", lambda: None)
    with pytest.raises(CourseError, match="ask your instructor"):
        solutions.find("04.address")
