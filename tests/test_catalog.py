"""The course map is true by construction: README's table is the one the notebooks imply."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course.catalog import (
    COURSE_DIR,
    LESSONS,
    code_packages,
    dependency_files,
    exercise_names,
    imported_modules,
    lesson,
    module_file,
    modules_defining,
    python_source,
    readme_table,
    with_dependencies,
)

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


def test_imports_are_read_at_any_depth_and_through_magics():
    source = "%time x = 1\nfrom course import ui\ndef f():\n    from course.kernels import cpp\n"
    expected = {"course", "course.ui", "course.kernels", "course.kernels.cpp"}
    assert imported_modules(source) == expected
    assert imported_modules("from course.fake import nothing") == set()  # no such file
    assert python_source("for i in x:\n    !ls\n") == "for i in x:\n    pass\n"


def test_module_files_are_found_without_importing():
    assert module_file("course.catalog") == COURSE_DIR / "catalog.py"
    assert module_file("course.emps") == COURSE_DIR / "emps" / "__init__.py"
    assert module_file("course.nope") is None and module_file("torch") is None


def test_dependencies_are_transitive_and_include_packages_and_data():
    found = with_dependencies({"course.exercises"})
    assert {"course", "course.exercises", "course.journal", "course.errors"} <= set(found)
    kernel = with_dependencies({"course.kernels.cpp.harness"})
    assert "course.kernels.cpp" in kernel
    files = {p.name for p in dependency_files(kernel)}
    assert {"harness.py", "addcmul_kernels.cpp"} <= files


# What the investigation finds, in words: none may appear in the map a learner reads first.
FINDINGS = (
    "contiguous",
    "layout",
    "stride",
    "adam",
    "addcmul",
    "addcdiv",
    "lose",
    "lost",
    "break",
    "placeholder",
    "frozen",
    "freeze",
)


@pytest.mark.parametrize("entry", LESSONS, ids=lambda e: e.filename)
def test_the_course_map_says_where_a_lesson_goes_not_what_it_finds(entry):
    """Notebook 00's course map shows `preview_question` before lesson 01 has begun."""
    shown = entry.preview_question.lower()
    assert not [word for word in FINDINGS if word in shown], entry.preview_question
    assert shown.endswith("?")


def test_a_notebooks_checkers_count_among_what_its_outputs_depend_on():
    names = exercise_names('check("02.sgd_step", sgd_step)\npredict("02.zero_pattern", c)')
    assert names == {"02.sgd_step", "02.zero_pattern"}
    defining = modules_defining(names)
    assert any(name.startswith("course.isolation.exercises") for name in defining)
    assert modules_defining(set()) == set()


def _intro(filename: str) -> str:
    """A notebook's first markdown cell, its lines joined (a number may end one line)."""
    cells = json.loads((ROOT / "notebooks" / filename).read_text(encoding="utf-8"))["cells"]
    first = next(c for c in cells if c["cell_type"] == "markdown")
    return " ".join("".join(first["source"]).split())


@pytest.mark.parametrize("entry", LESSONS, ids=lambda e: e.filename)
def test_a_notebooks_intro_states_the_catalogs_minutes(entry):
    """The course map, README and the room plan read `minutes` from the catalog; the learner reads
    the notebook's intro. Both must say the same time ("About 90 minutes with the exercises")."""
    stated = re.search(r"(\d+) minutes", _intro(entry.filename))
    assert stated, f"{entry.filename}'s intro states no minutes"
    assert int(stated.group(1)) == entry.minutes, (entry.filename, stated.group(0))
