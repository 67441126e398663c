"""The notebook policy of README's Contributing section, enforced.

nbval (run by `make test`) proves each notebook executes and that cells marked
`# NBVAL_CHECK_OUTPUT` reproduce their stored output. These tests prove the rest: stored outputs
are fresh (same code cells and the same course files as when `make notebooks` last ran them, no
gaps in execution counts, no errors, no widget's old text form), notebooks are small, numbered,
and each has the lesson's shape: one import cell, tables printed through `course.tables`.
tests/test_spoilers.py proves that no prediction or exercise is answered before it is asked.
"""

from __future__ import annotations

import ast
import html
import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

from course.catalog import LESSONS, python_source
from tests.known_failures import listed

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
    """Same code cells and the same course files (imported, transitively) as when last run."""
    nb = _read(path)
    stale = execute_notebooks.stale_parts(nb)
    assert not stale, (
        f"{path.name}: its stored outputs may be stale; changed since `make notebooks` last ran "
        f"it: {', '.join(stale)}. Run `make notebooks NB=notebooks/{path.name}`"
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


def _outputs_text(cell: nbformat.NotebookNode) -> str:
    """What a code cell's stored outputs show as text (HTML without its tags)."""
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append(output["text"])
        data = output.get("data", {})
        parts += [data[kind] for kind in ("text/plain", "text/markdown") if kind in data]
        if "text/html" in data:
            parts.append(html.unescape(re.sub(r"<[^>]+>", " ", data["text/html"])))
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_stored_output_shows_a_widgets_old_text_form(path):
    """A widget's stored text is its own sentence ("Interactive widget ..."), never `Panel(...)`."""
    for index, cell in enumerate(_read(path).cells):
        if cell.cell_type == "code":
            assert "Panel(" not in _outputs_text(cell), (
                f"{path.name} cell {index} stores an old widget text form; "
                f"run `make notebooks NB=notebooks/{path.name}`"
            )


BARE_RESULT = re.compile(r"-?\d+(\.\d+)?|None|True|False|Ellipsis|\(\)|\[\]|\{\}")
# Notebooks whose cells show a stray return value today (none since 02 hid mps_check's exit code).
STRAY_RESULTS: set[str] = set()


@pytest.mark.parametrize(
    "path", listed(NOTEBOOKS, STRAY_RESULTS, "a stray return value"), ids=lambda p: p.name
)
def test_no_cell_shows_a_stray_return_value(path):
    """A cell's result is something to read: never a bare exit code, None or an empty value
    left over from a call made for its printing."""
    stray = [
        f"cell {index} shows {output['data']['text/plain']!r}"
        for index, cell in enumerate(_read(path).cells)
        for output in cell.get("outputs", [])
        if output.output_type == "execute_result"
        and BARE_RESULT.fullmatch(output.get("data", {}).get("text/plain", "").strip())
    ]
    assert not stray, f"{path.name}: {'; '.join(stray)}"


def test_a_course_file_a_notebook_depends_on_is_in_its_digests():
    """The freshness test fails when a module a notebook imports, even indirectly, changes."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("from course.exercises import check\nimport torch")]
    )
    digests = execute_notebooks.digests(nb)
    shared = {"course/exercises/__init__.py", "course/journal.py", "course/__init__.py"}
    assert shared <= set(digests)
    assert execute_notebooks.CELLS in digests and "course/ui.py" not in digests
    nb.metadata["course"] = {"digests": {**digests, "course/journal.py": "0" * 16}}
    assert execute_notebooks.stale_parts(nb) == ["course/journal.py"]
    nb.cells[0].source += "\nprint(1)"
    assert execute_notebooks.CELLS in execute_notebooks.stale_parts(nb)
    nb.metadata["course"] = {}
    assert execute_notebooks.stale_parts(nb)  # never executed with digests: stale


def _import_cells(nb: nbformat.NotebookNode) -> list[int]:
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(python_source(cell.source))
        except SyntaxError:
            continue
        if any(isinstance(node, ast.Import | ast.ImportFrom) for node in ast.walk(tree)):
            found.append(index)
    return found


# Notebooks that import in several cells today; each lesson's rewrite takes itself off the list.
SCATTERED_IMPORTS: set[str] = set()


@pytest.mark.parametrize(
    "path", listed(NOTEBOOKS, SCATTERED_IMPORTS, "imports in several cells"), ids=lambda p: p.name
)
def test_one_import_cell(path):
    """Every import in one cell near the top: a reader sees at once what the lesson uses."""
    cells = _import_cells(_read(path))
    assert len(cells) == 1, f"{path.name}: imports in cells {cells}; gather them in one cell"


HAND_TABLE = re.compile(
    r"\{[^{}\n]*:[<>^=]?\d+\}"  # an f-string column width: {name:<12}, {count:>4}
    r"|\.[lr]just\(|\.center\("
    r"|\bpandas\b|\bDataFrame\b|\btabulate\b|\bhtml_table\("
)
# Notebooks that line up columns by hand today; each lesson's rewrite takes itself off the list.
HAND_TABLES: set[str] = set()


@pytest.mark.parametrize(
    "path", listed(NOTEBOOKS, HAND_TABLES, "columns lined up by hand"), ids=lambda p: p.name
)
def test_tables_go_through_course_tables(path):
    """Rows print through course.tables.text_table, so every lesson's tables look alike and
    nbval compares them exactly; no column widths by hand, no pandas."""
    offending = [
        f"cell {index}: {match.group(0)!r}"
        for index, cell in enumerate(_read(path).cells)
        if cell.cell_type == "code"
        for match in [HAND_TABLE.search(cell.source)]
        if match
    ]
    assert not offending, f"{path.name}: a table made by hand ({'; '.join(offending)})"
