"""The notebook policy of README's Contributing section, enforced.

nbval (run by `make test`) proves each notebook executes and that cells marked
`# NBVAL_CHECK_OUTPUT` reproduce their stored output. These tests prove the rest: stored outputs
are fresh (same code as when `make notebooks` last ran them, no gaps in execution counts, no
errors), notebooks are small, numbered, and each has the lesson's shape.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

from course.catalog import LESSONS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
MAX_BYTES = 800_000

_spec = importlib.util.spec_from_file_location(
    "execute_notebooks", ROOT / "scripts/execute_notebooks.py"
)
execute_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(execute_notebooks)


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def test_every_catalogued_lesson_exists_and_nothing_else():
    assert [p.name for p in NOTEBOOKS] == [lesson.filename for lesson in LESSONS]


def test_notebooks_are_numbered_consecutively():
    for index, path in enumerate(NOTEBOOKS):
        assert re.fullmatch(rf"{index:02d}_[a-z0-9_]+\.ipynb", path.name), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_are_fresh(path):
    nb = _read(path)
    recorded = nb.metadata.get("course", {}).get("code_sha256")
    assert recorded == execute_notebooks.code_hash(nb), (
        f"{path.name}: code changed since its outputs were stored; run `make notebooks NB={path}`"
    )
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: execution counts {counts}"
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{path.name}: stored error output {output.ename}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_size_is_capped(path):
    assert path.stat().st_size <= MAX_BYTES, f"{path.name} is {path.stat().st_size} bytes"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_lesson_shape(path):
    nb = _read(path)
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert markdown and markdown[0].lstrip().startswith("# "), "starts with a title"
    assert "?" in markdown[0], "the opening cell asks the notebook's question"
    assert any(re.search(r"^##+ What we learned", m, re.M) for m in markdown), (
        "has 'What we learned'"
    )
    index = NOTEBOOKS.index(path)
    if index + 1 < len(NOTEBOOKS):
        assert NOTEBOOKS[index + 1].name in "\n".join(markdown), "points to the next notebook"
    if index > 0:
        # check("NN.name", ...) or a case's own checkers (case.check_repro(...) in 10)
        assert re.search(r"\bcheck(_\w+)?\(", code), "has at least one auto-checked exercise"
        assert "## Exercises" in "\n".join(markdown) or "## Exercise" in "\n".join(markdown)
    assert "import *" not in code
    assert not re.search(r"\bfrom course\.\w+(\.\w+)* import _|\bcourse\.\w+\._", code), (
        "private names"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_cells_stay_short(path):
    """Notebooks narrate, the package computes: long logic belongs in course/."""
    for cell in _read(path).cells:
        if cell.cell_type != "code":
            continue
        logic = [
            line
            for line in cell.source.splitlines()
            if line.strip() and not line.strip().startswith("#")
        ]
        assert len(logic) <= 15, (
            f"{path.name}: a {len(logic)}-line cell belongs in course/:\n{cell.source}"
        )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_slides_metadata(path):
    nb = _read(path)
    assert all("slideshow" in c.metadata for c in nb.cells)
    assert nb.cells[0].metadata["slideshow"]["slide_type"] == "slide"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_key_results_are_checked(path):
    """Each lesson pins at least one deterministic result with # NBVAL_CHECK_OUTPUT."""
    sources = [c.source for c in _read(path).cells if c.cell_type == "code"]
    checked = [s for s in sources if s.lstrip().startswith("# NBVAL_CHECK_OUTPUT")]
    assert checked, f"{path.name} has no # NBVAL_CHECK_OUTPUT cell"
