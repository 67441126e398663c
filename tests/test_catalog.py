"""The course map is true by construction: README's table is the one the notebooks imply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course.catalog import LESSONS, code_packages, lesson, readme_table

ROOT = Path(__file__).resolve().parents[1]


def test_readme_table_matches_the_notebooks():
    table = readme_table()
    readme = (ROOT / "README.md").read_text()
    assert table in readme, (
        "README's notebook table drifted from the catalogue or the notebooks' imports; "
        f"replace it with:\n{table}"
    )


def test_code_packages_read_from_imports(tmp_path):
    cells = [
        {"cell_type": "markdown", "source": ["from course.fake import nothing"]},
        {"cell_type": "code", "source": ["from course.story.plateau import run\n", "import torch"]},
        {
            "cell_type": "code",
            "source": ["from course import emps\n", "import course.layout.opchain"],
        },
        {"cell_type": "code", "source": ["%matplotlib inline"]},
    ]
    (tmp_path / "99_x.ipynb").write_text(json.dumps({"cells": cells}))
    assert code_packages("99_x.ipynb", tmp_path) == ("course.emps", "course.layout", "course.story")


def test_every_imported_package_exists():
    import importlib

    for entry in LESSONS:
        for package in code_packages(entry.filename):
            importlib.import_module(package)


def test_unknown_lesson_names_the_known_ones():
    with pytest.raises(KeyError, match="00_start_here.ipynb"):
        lesson("99_nope.ipynb")
