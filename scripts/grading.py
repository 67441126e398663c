"""Homework graded with nbgrader: a course directory built from the reference notebooks.

    python scripts/grading.py DIR [NN_name ...]    # every lesson with checks, or those named

writes DIR/nbgrader_config.py and DIR/source/NN_name/NN_name.ipynb, nbgrader's source version of
each lesson. Then, in DIR, the usual nbgrader steps (README, "Grading homework"):

    nbgrader generate_assignment NN_name           # release/: what students get
    COURSE_GRADING=1 nbgrader autograde NN_name    # after their notebooks are in submitted/

The source is generated from the one source of each lesson, the reference notebook, never edited
by hand: a cell with a solution region becomes a solution cell; each `check(...)` becomes a
locked, autograded test cell worth the exercise's points (`course.exercises.grading.points`, from
its minutes); a cell that holds both an answer and its check is split in two there, because
nbgrader restores test cells from its database at grading time and would overwrite an answer in
the same cell. Predictions stay ungraded. `generate_assignment` then writes, in place of each
solution region, exactly what the learner copy holds (`LearnerScaffold` below replaces nbgrader's
own stub), so the release is the learner copy, split where a check shared a cell with its answer.
Under the autograder `check` returns the points earned (see `course.exercises.grading`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_learner_copies import (  # noqa: E402 (a script beside this one)
    REFERENCE_DIR,
    learner_cell,
    learner_notebook,
    scaffold,
    solution_regions,
)

from course.exercises import get  # noqa: E402
from course.exercises.grading import points  # noqa: E402

CHECK_LINE = re.compile(r"""^check\(\s*["'](?P<name>\d\d\.\w+)["']""")
CONFIG = """# nbgrader's configuration for this course, written by scripts/grading.py.
import sys

sys.path.insert(0, {scripts!r})
c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "pytorch-internals"
c.Execute.timeout = 600
# The release holds the learner copy's scaffolds instead of nbgrader's stub.
from nbgrader.converters.generate_assignment import GenerateAssignment  # noqa: E402

import grading  # noqa: E402

c.GenerateAssignment.preprocessors = grading.release_preprocessors(GenerateAssignment)
"""


def nbgrader_meta(cell_id: str, solution: bool, grade: int | None = None) -> dict:
    """nbgrader's cell metadata: a solution cell, or a locked test cell worth `grade` points."""
    meta = {
        "grade": grade is not None,
        "grade_id": cell_id,
        "locked": grade is not None,
        "schema_version": 3,
        "solution": solution,
    }
    if grade is not None:
        meta["points"] = grade
    return meta


def _split_at_check(source: str) -> tuple[str, str, str] | None:
    """(the code before the first top-level check line, the rest, the exercise's name)."""
    lines = source.split("\n")
    for index, line in enumerate(lines):
        found = CHECK_LINE.match(line)
        if found:
            return "\n".join(lines[:index]).rstrip("\n"), "\n".join(lines[index:]), found["name"]
    return None


def _cell(template: dict, cell_id: str, source: str, meta: dict) -> dict:
    cell = dict(template, id=cell_id, source=source, outputs=[], execution_count=None)
    cell["metadata"] = {**template.get("metadata", {}), "nbgrader": meta}
    return cell


def source_cells(cell: dict, where: str) -> list[dict]:
    """One reference cell as nbgrader's source: solution, test, both (split) or neither."""
    learner = learner_cell(cell, where)
    if cell["cell_type"] != "code":
        return [learner]
    text = "".join(cell["source"])
    text = "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("# NBVAL_"))
    has_solution = bool(solution_regions(text.split("\n")))
    split = _split_at_check(text)
    cell_id = learner.get("id", where)
    if split is None:
        if not has_solution:
            return [learner]
        return [_cell(learner, cell_id, text, nbgrader_meta(cell_id, solution=True))]
    answer, test, name = split
    graded = nbgrader_meta(f"{cell_id}-check", solution=False, grade=points(get(name).minutes))
    test_cell = _cell(learner, f"{cell_id}-check", test, graded)
    if not answer.strip():
        return [test_cell]
    answer_meta = nbgrader_meta(cell_id, solution=has_solution)
    return [_cell(learner, cell_id, answer, answer_meta), test_cell]


def source_notebook(reference: dict, name: str) -> dict:
    """nbgrader's source version of one lesson: the learner copy's frame, the reference's cells."""
    frame = learner_notebook(reference, name)
    cells = [frame["cells"][0]]  # the set-up cell
    for index, cell in enumerate(reference["cells"]):
        cells += source_cells(cell, f"{name} cell {index}")
    return {**frame, "cells": cells}


def graded_lessons(reference_dir: Path = REFERENCE_DIR) -> list[str]:
    """The lessons that have checks: each becomes one assignment."""
    return [
        path.stem
        for path in sorted(reference_dir.glob("[0-9][0-9]_*.ipynb"))
        if CHECK_LINE.search(path.read_text()) or '"check(' in path.read_text()
    ]


def write_course(root: Path, lessons: list[str], reference_dir: Path = REFERENCE_DIR) -> None:
    """The course directory: nbgrader's config and one source folder per lesson."""
    root.mkdir(parents=True, exist_ok=True)
    scripts = str(Path(__file__).resolve().parent)
    (root / "nbgrader_config.py").write_text(CONFIG.format(scripts=scripts, root=str(root)))
    for lesson in lessons:
        reference = json.loads((reference_dir / f"{lesson}.ipynb").read_text())
        folder = root / "source" / lesson
        folder.mkdir(parents=True, exist_ok=True)
        notebook = source_notebook(reference, lesson)
        (folder / f"{lesson}.ipynb").write_text(json.dumps(notebook, indent=1) + "\n")


def release_preprocessors(generate_assignment: type) -> list[type]:
    """nbgrader's own list for generate_assignment, its ClearSolutions replaced by ours."""
    from nbgrader.preprocessors import ClearSolutions

    default = generate_assignment.class_traits()["preprocessors"].default()
    scaffolds = learner_scaffold_class()
    return [scaffolds if p is ClearSolutions else p for p in default]


def learner_scaffold_class() -> type:
    """The preprocessor, made on first use: nbgrader is an optional extra (`.[teach]`)."""
    from nbgrader.preprocessors import NbGraderPreprocessor
    from nbgrader.utils import is_solution

    class LearnerScaffold(NbGraderPreprocessor):
        """A solution cell's regions replaced as the learner copy replaces them."""

        def preprocess_cell(self, cell, resources, index):  # noqa: ANN001 (nbconvert's API)
            if cell.cell_type == "code" and is_solution(cell):
                cell.source = scaffold(cell.source)
            return cell, resources

    return LearnerScaffold


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="the nbgrader course directory to write")
    parser.add_argument("lessons", nargs="*", help="e.g. 03_inside_adam (default: all graded)")
    args = parser.parse_args(argv)
    known = graded_lessons()
    unknown = sorted(set(args.lessons) - set(known))
    if unknown:
        parser.error(f"no graded lesson named {', '.join(unknown)}; lessons: {', '.join(known)}")
    write_course(args.root.resolve(), args.lessons or known)
    print(f"nbgrader course written to {args.root}: {', '.join(args.lessons or known)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
