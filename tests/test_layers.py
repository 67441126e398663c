"""The package's layers: lower layers never import higher ones, and no module imports itself
back through another (no import cycles). README's "Package layout" section lists the same order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

COURSE = Path(__file__).resolve().parents[1] / "course"

# Lowest first. A module may import its own package and anything at its level or below.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(level.split())
    for level in (
        "errors progress",
        "ui tables exercises journal devices mps_check figures",
        "emps",
        "story",
        "layout",
        "dispatch",
        "kernels",
        "isolation",
        "adam",
        "audit",
        "casefile start mystery",
        "catalog doctor frontends __main__ __init__",
    )
)


def level_of(part: str) -> int:
    for index, names in enumerate(LAYERS):
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


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_reaches_a_higher_layer(name):
    mine = level_of(top_part(name))
    for target in course_imports(MODULES[name]):
        if target == "course" or top_part(target) == top_part(name):
            continue
        assert level_of(top_part(target)) <= mine, f"{name} (a lower layer) imports {target}"


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
