"""The reference solutions, read from the one place they are written: the reference notebooks.

An exercise's solution is the code between `### BEGIN SOLUTION` and `### END SOLUTION` (the
markers nbgrader reads) in the reference notebook's cell that defines what the learner hands to
`check(...)`. Nothing else in the package holds it: the learner copies are generated from the
same cells with the regions replaced by the scaffold, the tests run the same text through the
checker (tests/solutions.py holds each reference to it), and `solution(name)` shows it.

Where the reference notebooks are absent (a student release, `make release`), there is no
solution to show; an instructor can point `COURSE_SOLUTIONS` at a folder of reference notebooks.
"""

from __future__ import annotations

import ast
import json
import os
from dataclasses import dataclass
from pathlib import Path

from course import catalog
from course.errors import CourseError

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def notebook_dir() -> Path | None:
    """The folder of reference notebooks: `COURSE_SOLUTIONS`, else the checkout's notebooks/."""
    chosen = os.environ.get("COURSE_SOLUTIONS")
    folder = Path(chosen) if chosen else catalog.NOTEBOOK_DIR
    return folder if folder.is_dir() else None


@dataclass(frozen=True)
class Solution:
    """One exercise's solution: the cells that define the answer, and the regions inside them.

    `regions`: the code between the markers that belongs to the answer's definition (a
    function's body, an assignment), in order; `cells`: those cells as a learner would type
    them, markers removed; `answer`: the expression the notebook checks (`my_step`, or a dict
    or tuple of the functions it defines)."""

    name: str
    regions: tuple[str, ...]
    cells: tuple[str, ...]
    answer: str = ""  # what the notebook hands to check(...) or predict(...), as code

    @property
    def text(self) -> str:
        return "\n\n".join(self.cells)


def code_cells(filename: str, folder: Path) -> list[str]:
    """A notebook's code cells, as text."""
    cells = json.loads((folder / filename).read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _check_call(source: str, name: str) -> ast.Call | None:
    """The `check(name, answer)` or `predict(name, choice)` call in a cell, if any."""
    try:
        tree = ast.parse(catalog.python_source(source))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) in ("check", "predict")
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == name
        ):
            return node
    return None


def _definitions(source: str, names: set[str]) -> list[tuple[int, int]]:
    """The line ranges (1-based, inclusive) of the top-level statements defining `names`."""
    try:
        tree = ast.parse(catalog.python_source(source))
    except SyntaxError:
        return []
    spans = []
    for node in tree.body:
        defined: set[str] = set()
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            defined = {node.name}
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if defined & names:
            spans.append((node.lineno, node.end_lineno or node.lineno))
    return spans


def _regions(source: str) -> list[tuple[int, int]]:
    """The (first, last) line numbers of each marked region's code, markers excluded."""
    spans, start = [], None
    for number, line in enumerate(source.split("\n"), start=1):
        if line.strip() == BEGIN:
            start = number + 1
        elif line.strip() == END and start is not None:
            spans.append((start, number - 1))
            start = None
    return spans


def without_markers(source: str) -> str:
    """A reference cell as a learner would type it: the solution markers' lines removed."""
    return "\n".join(line for line in source.split("\n") if line.strip() not in (BEGIN, END))


def find(name: str, folder: Path | None = None) -> Solution:
    """The solution of exercise or prediction `name`, read from its lesson's reference notebook."""
    from course.exercises.registry import lesson_of

    folder = folder or notebook_dir()
    if folder is None:
        raise CourseError(
            "this install holds no reference solutions (a student release): ask your instructor"
        )
    cells = code_cells(lesson_of(name).filename, folder)
    at = next((i for i, cell in enumerate(cells) if _check_call(cell, name)), None)
    if at is None:
        raise CourseError(f"{lesson_of(name).filename} has no check({name!r}, ...) cell")
    answer = _check_call(cells[at], name).args[1]
    names = {n.id for n in ast.walk(answer) if isinstance(n, ast.Name)}
    regions, shown = [], []
    for cell in reversed(cells[: at + 1]):
        spans = _definitions(cell, names)
        found = [r for r in _regions(cell) if any(a <= r[1] and r[0] <= b for a, b in spans)]
        if found:
            lines = cell.split("\n")
            regions[:0] = ["\n".join(lines[a - 1 : b]) for a, b in found]
            shown.insert(0, without_markers(cell))
            names -= {n for n in names if _definitions(cell, {n})}
        if not names:
            break
    if not regions:  # a choice or a value typed in the check cell's own region
        lines = cells[at].split("\n")
        regions = ["\n".join(lines[a - 1 : b]) for a, b in _regions(cells[at])]
        shown = [without_markers(cells[at])]
    return Solution(name, tuple(regions), tuple(shown), ast.unparse(answer))
