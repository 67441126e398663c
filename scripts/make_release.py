"""A student release: what students clone for graded homework, with no answer in it.

    python scripts/make_release.py DIR       # `make release DIR=...`

The release holds the learner copies, the package, the assets the notebooks show, the README and
what `make lab` needs; never the reference notebooks (`notebooks/`, the one place the solutions
are written) nor the tests (their corpora hold each reference as an answer). With no reference
notebooks beside the package, `solution(...)`, `reveal_all()` and the instructor's tools find no
solution to print; an instructor points `COURSE_SOLUTIONS` at a folder of reference notebooks.
Every check still works: a checker holds how to judge an answer, not the answer.

`leaks(DIR)` lists every reference solution region found in the release tree;
tests/test_release.py requires none and runs each learner copy there.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("README.md", "pyproject.toml", "environment.yml", "postBuild", "Makefile")
FOLDERS = ("course", "learner", "assets")
SCRIPTS = ("lab_workspace.py",)  # what `make lab` runs
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", ".ipynb_checkpoints")
MIN_CHARS = 30  # a region shorter than this (`choice = "a"`) is not a recognisable solution


def write_release(target: Path) -> None:
    """Copy what students need into `target` (which must not exist yet, or be empty)."""
    if target.exists() and any(target.iterdir()):
        raise SystemExit(f"{target} is not empty: a release is written into a new folder")
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copy2(ROOT / name, target / name)
    for name in FOLDERS:
        shutil.copytree(ROOT / name, target / name, ignore=IGNORED)
    (target / "scripts").mkdir()
    for name in SCRIPTS:
        shutil.copy2(ROOT / "scripts" / name, target / "scripts" / name)


def _code(text: str) -> str:
    """Code with whitespace, comments and blank lines removed: what a copy would keep."""
    lines = (line.split("#", 1)[0].strip() for line in text.split("\n"))
    return "".join("".join(line.split()) for line in lines if line)


def solution_regions() -> dict[str, list[str]]:
    """Every exercise's and prediction's solution regions, from the reference notebooks."""
    from course.exercises import all_exercises, all_predictions, solutions

    names = [*all_exercises(), *all_predictions()]
    return {name: list(solutions.find(name).regions) for name in names}


def notebook_names(name: str) -> set[str]:
    """What exercise `name`'s reference notebook imports from the course and the functions it
    defines itself (earlier exercises' answers): the calls a region may make and reveal nothing."""
    from course.exercises import solutions
    from course.exercises.registry import lesson_of

    known: set[str] = set()
    for cell in solutions.code_cells(lesson_of(name).filename, solutions.notebook_dir()):
        try:
            tree = ast.parse(cell)
        except SyntaxError:  # a cell with IPython magics holds no import of the course
            continue
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "course":
                known |= {alias.asname or alias.name for alias in node.names}
            elif isinstance(node, ast.FunctionDef):
                known.add(node.name)
    return known


def names_a_helper(region: str, helpers: set[str]) -> bool:
    """Whether a region is one statement that only calls `helpers` (`floor =
    best_possible_loss(dataset())`). Such a region is no secret: the prompt names the helper, the
    notebook imports it from the course or defines it in an earlier exercise (whose own region is
    searched for on its own), so the same call in a checker is not the answer leaking."""
    try:
        body = ast.parse(textwrap.dedent(region)).body
    except SyntaxError:
        return False
    calls = [node for node in ast.walk(body[0]) if isinstance(node, ast.Call)] if body else []
    return (
        len(body) == 1
        and bool(calls)
        and all(isinstance(c.func, ast.Name) and c.func.id in helpers for c in calls)
    )


def _readable(path: Path) -> str:
    """A file's text as code reads: a notebook's cells and outputs, not its JSON (which escapes
    every quote a solution holds)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except ValueError:  # not a notebook after all: read it as it is
        return text
    parts = ["".join(c.get("source", "")) for c in cells]
    parts += [json.dumps(o) for c in cells for o in c.get("outputs", [])]
    return "\n".join(parts)


def leaks(target: Path) -> list[str]:
    """'NAME in PATH' for every solution region whose code appears in a file of the release
    (a region too short to recognise, or one call of the notebook's helpers, is not searched)."""
    texts = {
        path: _code(_readable(path))
        for path in target.rglob("*")
        if path.is_file() and path.suffix in (".py", ".ipynb", ".md", ".txt", ".json", ".cpp")
    }
    found = []
    for name, regions in solution_regions().items():
        helpers = notebook_names(name)
        for region in regions:
            code = _code(region)
            if len(code) < MIN_CHARS or names_a_helper(region, helpers):
                continue
            found += [f"{name} in {p.relative_to(target)}" for p, t in texts.items() if code in t]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path, help="the folder to write (new or empty)")
    args = parser.parse_args(argv)
    write_release(args.target)
    found = leaks(args.target)
    if found:
        print("solutions found in the release:\n  " + "\n  ".join(found), file=sys.stderr)
        return 1
    print(f"student release written to {args.target}: no reference solution in it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
