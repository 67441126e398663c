"""The package's layers: lower layers never import higher ones, lessons never import each other
(except the documented exceptions below), and no module imports itself back through another (no
import cycles). README's "Package layout" section lists the same order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "course"

# Lowest first. A module may import its own package and anything at its level or below.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (title, frozenset(names.split()))
    for title, names in (
        ("shared: the error type, validators", "errors requirements progressbar"),
        ("the course map (data: which lesson holds which checks)", "catalog"),
        (
            "shared: widgets, tables, checkers",
            "ui markup tables exercises journal figures devices mps_check",
        ),
        ("the emulated device", "emps"),
        ("the model layer", "model"),
        ("concept tools", "layout dispatch kernels audit"),
        ("lessons", "story isolation adam casefile start mystery"),
        ("closing packages", "doctor frontends"),
        ("the command line", "__main__ __init__"),
    )
)
LESSONS = dict(LAYERS)["lessons"]
# Lesson packages a lesson may import, each with the reason. Empty today: what two lessons share
# lives in the model layer or a concept tool. `adam` may never appear as the importer: notebook 05
# uses it as a tool, so it must stay free of experiments.
LESSON_EXCEPTIONS: dict[tuple[str, str], str] = {}
IMPORTS_NO_LESSON = frozenset({"adam"})


def level_of(part: str) -> int:
    for index, (_, names) in enumerate(LAYERS):
        if part in names:
            return index
    raise AssertionError(f"course.{part} is in no layer: add it to LAYERS (and README)")


def module_name(path: Path) -> str:
    parts = path.relative_to(COURSE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def course_imports(path: Path) -> set[str]:
    """Every course module a file imports, at module level or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("course"):
            if node.module == "course":
                found |= {f"course.{a.name}" for a in node.names}
            else:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("course")}
    return found


MODULES = {module_name(p): p for p in sorted(COURSE.rglob("*.py"))}


def top_part(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def foreign_imports(name: str) -> set[str]:
    """The top-level course packages `name` imports, other than its own."""
    mine = top_part(name)
    return {
        top_part(t) for t in course_imports(MODULES[name]) if t != "course" and top_part(t) != mine
    }


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_reaches_a_higher_layer(name):
    mine = level_of(top_part(name))
    for target in foreign_imports(name):
        assert level_of(target) <= mine, f"{name} (a lower layer) imports course.{target}"


def test_lessons_import_no_other_lesson_but_the_documented_exceptions():
    used = {
        (top_part(name), target)
        for name in MODULES
        for target in foreign_imports(name)
        if top_part(name) in LESSONS and target in LESSONS
    }
    undocumented = sorted(used - set(LESSON_EXCEPTIONS))
    assert not undocumented, f"a lesson imports another lesson: {undocumented}"
    stale = sorted(set(LESSON_EXCEPTIONS) - used)
    assert not stale, f"LESSON_EXCEPTIONS lists imports nothing makes any more: {stale}"
    for (importer, imported), reason in LESSON_EXCEPTIONS.items():
        assert importer not in IMPORTS_NO_LESSON, f"course.{importer} may import no lesson"
        assert len(reason.split()) >= 5, f"say why {importer} imports {imported}"


def test_readme_names_every_package():
    readme = (ROOT / "README.md").read_text()
    packages = {top_part(name) for name in MODULES} - {"__init__", "__main__"}
    missing = sorted(p for p in packages if f"`course.{p}`" not in readme)
    assert not missing, f"README's package table lacks {missing}"


def test_no_import_cycles():
    graph = {
        name: {t for t in course_imports(path) if t in MODULES and t != name}
        for name, path in MODULES.items()
    }
    done: set[str] = set()

    def visit(node: str, stack: list[str]) -> None:
        if node in stack:
            cycle = stack[stack.index(node) :] + [node]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if node in done:
            return
        for nxt in graph[node]:
            if nxt != "course" and not nxt.startswith(node + "."):  # a package's own modules
                visit(nxt, [*stack, node])
        done.add(node)

    for name in graph:
        visit(name, [])
