"""One source per answer: each exercise's reference in tests/ is the reference notebook's solution.

The notebook's solution region (what `solution(name)` shows and the learner copy blanks out) and
the reference the corpus tests run must be the same code: a test that fails when they differ.
The reference may wrap the region in what makes it an answer here (the factory's own `def`, the
function's signature that the notebook writes outside the markers, a closing `return name`).
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

import pytest

from course.exercises import solutions
from tests.corpus import all_corpora

CORPORA = all_corpora()


def code_lines(text: str) -> list[str]:
    """The code's lines, stripped, without blank lines and whole-line comments."""
    return [
        line.strip()
        for line in text.split("\n")
        if line.strip() and not line.strip().startswith("#")
    ]


def _returns(line: str, answer: str) -> bool:
    """A closing `return name`, or one that returns what the notebook checks itself (a dict or a
    tuple of the functions the notebook defines: `return my_cpu, my_fake`)."""
    if re.fullmatch(r"return \w+", line):
        return True
    if not line.startswith("return "):
        return False
    try:
        return ast.unparse(ast.parse(line.removeprefix("return "))) == answer
    except SyntaxError:  # a return that spans lines: not the answer's one-liner
        return False


def reference_lines(name: str, answer: str = "") -> list[str]:
    """The reference factory's lines, without its own `def`, docstring and closing return."""
    source = textwrap.dedent(inspect.getsource(CORPORA[name].reference))
    lines = code_lines(source)
    if lines and lines[0].startswith("def ") and lines[0].endswith("():"):
        lines = lines[1:]
        if lines and lines[0].startswith(('"""', "'''")):
            end = next(i for i, line in enumerate(lines) if line.endswith(('"""', "'''")))
            lines = lines[end + 1 :]
    if lines and _returns(lines[-1], answer):
        lines = lines[:-1]
    return lines


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_the_reference_is_the_notebooks_solution(name):
    found = solutions.find(name)
    region = [line for r in found.regions for line in code_lines(r)]
    outside = set(code_lines(found.text)) - set(region)
    ours = [line for line in reference_lines(name, found.answer) if line not in outside]
    assert ours == region, (
        f"{name}: tests' reference and the notebook's solution region differ\n"
        f"notebook: {region}\nreference: {ours}"
    )
