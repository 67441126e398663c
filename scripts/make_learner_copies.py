"""Generate the learner copies (learner/NN_*.ipynb) from the executed references (notebooks/).

    python scripts/make_learner_copies.py            # rewrite learner/ (`make learner`)
    python scripts/make_learner_copies.py --check    # exit 1 and name the stale copies

A reference notebook carries its solutions and stored outputs, for nbval, the site, slides and
instructors. What a learner opens must show neither, so each copy:
- starts with the set-up cell (course.frontends: installs the course on Colab, a no-op here);
- has no outputs, no execution counts, and cell metadata cut down to tags;
- replaces every solution region (RULES: `### BEGIN SOLUTION` ... `### END SOLUTION`): inside a
  function body by `raise NotImplementedError("your code here")` at the marker's indentation,
  at top level by `name = ...  # your answer` for each `name = value` statement (others dropped),
  so "Run All" still completes and each check(...) answers "not attempted yet";
- drops the nbval markers (`# NBVAL_CHECK_OUTPUT`, ...), which mean nothing to a learner.
The reference is the one source; tests/test_learner_copies.py fails when learner/ is stale.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import textwrap
from pathlib import Path

from course.catalog import python_source
from course.exercises import SCAFFOLD
from course.frontends import setup_cell_source

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DIR = ROOT / "notebooks"
LEARNER_DIR = ROOT / "learner"
BEGIN = re.compile(r"^(?P<indent>[ \t]*)#+\s*BEGIN SOLUTION\s*$")
END = re.compile(r"^[ \t]*#+\s*END SOLUTION\s*$")
NBVAL_MARKER = re.compile(r"^\s*#\s*NBVAL_\w+\s*$")
RAISE = f'raise NotImplementedError("{SCAFFOLD}")'  # check() reads it as "not attempted yet"
ANSWER = "...  # your answer"
SETUP_CELL_ID = "course-setup"


class SolutionMarkerError(ValueError):
    """A solution region that cannot be turned into a learner scaffold (unbalanced, unparsable)."""


def solution_regions(lines: list[str]) -> list[tuple[int, int]]:
    """(begin, end) line indices of each solution region; markers must pair up, unnested."""
    regions, begin = [], None
    for index, line in enumerate(lines):
        if BEGIN.match(line):
            if begin is not None:
                raise SolutionMarkerError(f"line {index + 1}: BEGIN SOLUTION inside another region")
            begin = index
        elif END.match(line):
            if begin is None:
                raise SolutionMarkerError(f"line {index + 1}: END SOLUTION without a BEGIN")
            regions.append((begin, index))
            begin = None
    if begin is not None:
        raise SolutionMarkerError(f"line {begin + 1}: BEGIN SOLUTION never ends")
    return regions


def _function_spans(source: str) -> list[tuple[int, int]]:
    """1-based (first body line, last line) of every function in the cell."""
    tree = ast.parse(python_source(source))
    return [
        (node.body[0].lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def _assigned_names(body: str) -> list[str]:
    """The names bound by each top-level `name = value` (or `a, b = ...`) statement of a region."""
    names: list[str] = []
    code = "\n".join(line for line in body.split("\n") if line.strip()[:1] not in ("#", ""))
    for node in ast.parse(textwrap.dedent(code)).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        for target in targets:
            parts = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
            names += [p.id for p in parts if isinstance(p, ast.Name)]
    return names


def scaffold(source: str) -> str:
    """One code cell's learner version: solution regions replaced, nbval markers dropped."""
    lines = source.split("\n")
    regions = solution_regions(lines)
    functions = _function_spans(source) if regions else []
    out: list[str] = []
    cursor = 0
    for begin, end in regions:
        out += lines[cursor:begin]
        indent = BEGIN.match(lines[begin]).group("indent")
        in_function = any(first <= begin + 2 <= last for first, last in functions)
        if in_function:
            out.append(indent + RAISE)
        else:
            body = "\n".join(lines[begin + 1 : end])
            answers = [f"{indent}{name} = {ANSWER}" for name in _assigned_names(body)]
            out += answers or ([indent + "pass"] if indent else [])
        cursor = end + 1
    out += lines[cursor:]
    text = "\n".join(line for line in out if not NBVAL_MARKER.match(line))
    if regions:
        ast.parse(python_source(text))  # a scaffold that does not parse would break "Run All"
    return text.strip("\n")


def _setup_cell() -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": SETUP_CELL_ID,
        "metadata": {"tags": ["setup"]},
        "outputs": [],
        "source": _lines(setup_cell_source()),
    }


def _lines(text: str) -> list[str]:
    """A cell source in nbformat's on-disk form: a list of lines, each but the last with its \\n."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def learner_cell(cell: dict, where: str) -> dict:
    """A reference cell as the learner sees it: no outputs, no solution, metadata only tags."""
    tags = [t for t in cell.get("metadata", {}).get("tags", []) if "solution" not in t.lower()]
    new = {"cell_type": cell["cell_type"], "id": cell.get("id"), "metadata": {}}
    if tags:
        new["metadata"]["tags"] = tags
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    if cell["cell_type"] == "code":
        try:
            source = scaffold(source)
        except (SolutionMarkerError, SyntaxError) as exc:
            raise SolutionMarkerError(f"{where}: {exc}") from exc
        new.update(execution_count=None, outputs=[])
    elif "attachments" in cell:
        new["attachments"] = cell["attachments"]
    new["source"] = _lines(source)
    if new["id"] is None:
        del new["id"]
    return new


def learner_notebook(reference: dict, name: str) -> dict:
    """The learner copy of one reference notebook."""
    cells = [
        learner_cell(cell, f"{name} cell {index}") for index, cell in enumerate(reference["cells"])
    ]
    # What JupyterLab would add back on opening (so an unedited copy stays byte-identical).
    keep = ("kernelspec", "language_info")
    metadata = {k: reference["metadata"][k] for k in keep if k in reference["metadata"]}
    return {
        "cells": [_setup_cell(), *cells],
        "metadata": metadata,
        "nbformat": reference.get("nbformat", 4),
        "nbformat_minor": max(reference.get("nbformat_minor", 5), 5),  # 4.5+ has cell ids
    }


def render(notebook: dict) -> str:
    """The file text: nbformat's own layout (1-space indent, sorted keys), so diffs stay small."""
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def expected_copies(reference_dir: Path = REFERENCE_DIR) -> dict[str, str]:
    """File name -> the text each learner copy must have."""
    return {
        path.name: render(learner_notebook(json.loads(path.read_text()), path.name))
        for path in sorted(reference_dir.glob("[0-9][0-9]_*.ipynb"))
    }


def stale_copies(reference_dir: Path = REFERENCE_DIR, learner_dir: Path = LEARNER_DIR) -> list[str]:
    """Learner copies that are missing, out of date, or have no reference any more."""
    expected = expected_copies(reference_dir)
    present = {p.name for p in learner_dir.glob("*.ipynb")} if learner_dir.is_dir() else set()
    stale = [
        name
        for name, text in expected.items()
        if name not in present or (learner_dir / name).read_text() != text
    ]
    return sorted(stale + [name for name in present - set(expected)])


def write_copies(reference_dir: Path = REFERENCE_DIR, learner_dir: Path = LEARNER_DIR) -> list[str]:
    """Write every learner copy (and remove those whose reference is gone); the names written."""
    learner_dir.mkdir(parents=True, exist_ok=True)
    expected = expected_copies(reference_dir)
    written = []
    for name, text in expected.items():
        path = learner_dir / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            written.append(name)
    for path in learner_dir.glob("*.ipynb"):
        if path.name not in expected:
            path.unlink()
            written.append(path.name)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="only report stale copies (exit 1)")
    args = p.parse_args(argv)
    if args.check:
        stale = stale_copies()
        if stale:
            print(f"stale learner copies: {', '.join(stale)}; run `make learner`", file=sys.stderr)
            return 1
        print("learner copies are up to date")
        return 0
    written = write_copies()
    print(
        f"learner/: {len(written)} copies rewritten"
        + (f" ({', '.join(written)})" if written else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
