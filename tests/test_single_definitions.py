"""Issue 23: one definition of each validator and each limit, so a bound cannot drift apart.

A limit is a module-level MAX_*/MIN_* constant or the torch floor; a validator is a public
`require_*` function. Two modules defining the same name mean two answers to one question: give
the concepts distinct names (MAX_TRAIN_STEPS vs MAX_CASE_STEPS) or import the one definition.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

COURSE = Path(__file__).resolve().parents[1] / "course"


def _defined(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("require_"):
            names.add(node.name)
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and target.id.startswith(("MAX_", "MIN_", "TORCH_")):
                names.add(target.id)
    return names


def test_each_limit_and_validator_is_defined_once():
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(COURSE.rglob("*.py")):
        for name in _defined(ast.parse(path.read_text())):
            where[name].append(str(path.relative_to(COURSE.parent)))
    repeated = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not repeated, f"defined more than once: {repeated}"
    assert {"require_int", "require_shape", "MAX_TRAIN_STEPS", "TORCH_FLOOR"} <= set(where)
