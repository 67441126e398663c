"""Read the *installed* torch's Adam: where its state is born and which ops its step runs.

Why read it live: the course must agree with whatever torch the learner has, so nothing here is
copied from adam.py or pinned to a line number. The lines are found by content, in the parsed
source (`ast`): the `zeros_like(..., memory_format=torch.preserve_format)` calls that create the
state in `Adam._init_group`, and the `lerp_`, `mul_`, `addcmul_`, `addcdiv_` calls of
`_single_tensor_adam` on its default path. If a future torch drops any of them, `locate` raises
a CourseError naming what vanished, instead of showing the wrong lines.

`code_paths()` answers the other question the source raises: which implementation (single-
tensor, foreach or fused) runs by default on which device, read from torch's own rule
(`torch.optim.optimizer._default_to_fused_or_foreach`) and confirmed by tracing a real step.
"""

from __future__ import annotations

import ast
import html
import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import torch

from course import emps
from course.dispatch.tracer import trace
from course.errors import CourseError

# Receiver of each op in the story's reading of the step (adam.py's own variable names).
STEP_OPS = {"lerp_": "exp_avg", "mul_": "exp_avg_sq", "addcmul_": "exp_avg_sq", "addcdiv_": "param"}
STATE_KEYS = ("exp_avg", "exp_avg_sq")
# Flags whose default is False: an `if` testing one of them is a branch the default path skips.
NON_DEFAULT_FLAGS = frozenset({"differentiable", "capturable"})


@dataclass(frozen=True)
class Excerpt:
    """One statement of the installed adam.py, with its real line numbers."""

    label: str  # "state['exp_avg']" or an op name like "addcmul_"
    function: str  # "Adam._init_group" or "_single_tensor_adam"
    lineno: int
    end_lineno: int
    code: str


@dataclass(frozen=True)
class AdamSource:
    """The excerpts found in one adam.py source, and the file they came from."""

    filename: str
    lines: tuple[str, ...]
    state: tuple[Excerpt, ...]
    ops: tuple[Excerpt, ...]

    def rows(self) -> list[dict[str, object]]:
        """One row per excerpt, for a table or a test."""
        return [
            {"what": e.label, "function": e.function, "line": e.lineno, "code": e.code.strip()}
            for e in self.state + self.ops
        ]

    def line_rows(self) -> list[dict[str, object]]:
        """One row per excerpt: its line number, what it is, and its first line of code without
        the comment (a table narrow enough to print in a notebook cell)."""
        return [
            {
                "line": e.lineno,
                "what": e.label,
                "code": e.code.split("\n")[0].split("  #")[0].strip(),
            }
            for e in self.state + self.ops
        ]

    @property
    def shown_name(self) -> str:
        """The file's path inside the installed packages (torch/optim/adam.py): the same on every
        machine, where the absolute path would show the machine that ran the notebook."""
        packages = Path(torch.__file__).resolve().parents[1]
        try:
            return Path(self.filename).resolve().relative_to(packages).as_posix()
        except ValueError:  # "<string>", or a file outside the installed torch
            return self.filename

    def html(self, context: int = 1) -> str:
        """Each excerpt with `context` lines around it, line-numbered, found lines highlighted."""
        version = torch.__version__.split("+")[0]
        parts = [f"<p><code>{html.escape(self.shown_name)}</code> (torch {version})</p>"]
        for first, last, labels, function in _blocks(self.state + self.ops):
            lo, hi = max(1, first - context), min(len(self.lines), last + context)
            body = "".join(
                _html_line(n, self.lines[n - 1], first <= n <= last) for n in range(lo, hi + 1)
            )
            title = html.escape(f"{function}: {', '.join(labels)}")
            parts.append(f"<div><b>{title}</b><pre style='margin:2px 0 8px 0'>{body}</pre></div>")
        return "".join(parts)


def _html_line(number: int, text: str, found: bool) -> str:
    style = "background:#fff3a8" if found else "color:#555"
    return f"<span style='{style}'>{number:5d}  {html.escape(text)}</span>\n"


def _blocks(excerpts):
    """Merge excerpts of the same statement (mul_ and addcmul_ share one line)."""
    merged: dict[tuple[int, int, str], list[str]] = {}
    for e in excerpts:
        merged.setdefault((e.lineno, e.end_lineno, e.function), []).append(e.label)
    return [(lo, hi, labels, fn) for (lo, hi, fn), labels in merged.items()]


def read_source(source: str | ModuleType | None = None) -> tuple[str, str]:
    """(text, filename) of adam.py: the installed module by default, or a string for tests."""
    if source is None:
        source = importlib.import_module("torch.optim.adam")
    if isinstance(source, ModuleType):
        return inspect.getsource(source), inspect.getsourcefile(source) or source.__name__
    if isinstance(source, str):
        return source, "<string>"
    raise CourseError(f"source must be a module or a string of Python, not {type(source).__name__}")


def find_function(tree: ast.Module, name: str, cls: str | None = None) -> ast.FunctionDef:
    """A top-level function, or a method of a top-level class, found by name."""
    scope: list[ast.stmt] = tree.body
    if cls is not None:
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
        if not classes:
            raise CourseError(
                f"adam.py defines no class {cls!r} any more; the course reads the "
                f"state initialisation from {cls}.{name}"
            )
        scope = classes[0].body
    for node in scope:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    where = f"{cls}.{name}" if cls else name
    raise CourseError(
        f"adam.py defines no {where} any more (torch {torch.__version__}); the "
        "course reads Adam's step from it: update course/adam/source.py"
    )


def locate(source: str | ModuleType | None = None) -> AdamSource:
    """Find the state creation and the four step ops in adam.py, by content."""
    text, filename = read_source(source)
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise CourseError(f"could not parse {filename} as Python: {exc}") from exc
    lines = tuple(text.splitlines())
    state = _state_inits(find_function(tree, "_init_group", cls="Adam"), lines)
    ops = _step_ops(find_function(tree, "_single_tensor_adam"), lines)
    return AdamSource(filename, lines, state, ops)


def _excerpt(label: str, function: str, stmt: ast.stmt, lines: tuple[str, ...]) -> Excerpt:
    end = stmt.end_lineno or stmt.lineno
    return Excerpt(label, function, stmt.lineno, end, "\n".join(lines[stmt.lineno - 1 : end]))


def _is_preserving_zeros_like(node: ast.AST) -> bool:
    """`torch.zeros_like(p, memory_format=torch.preserve_format)`, whatever the formatting."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "zeros_like"
    ):
        return False
    return any(
        k.arg == "memory_format"
        and isinstance(k.value, ast.Attribute)
        and k.value.attr == "preserve_format"
        for k in node.keywords
    )


def _state_inits(func: ast.FunctionDef, lines: tuple[str, ...]) -> tuple[Excerpt, ...]:
    found = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and _is_preserving_zeros_like(node.value):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
                    found[target.slice.value] = _excerpt(
                        f"state[{target.slice.value!r}]", "Adam._init_group", node, lines
                    )
    missing = [key for key in STATE_KEYS if key not in found]
    if missing:
        raise CourseError(
            f"Adam._init_group no longer creates state {missing} with "
            "torch.zeros_like(p, memory_format=torch.preserve_format); the story's "
            "explanation of the non-contiguous state needs re-checking for torch "
            f"{torch.__version__}"
        )
    return tuple(sorted(found.values(), key=lambda e: e.lineno))


def _receiver(call: ast.Call) -> str | None:
    """The variable at the root of `x.a(...).b(...)`: "x"."""
    node = call.func
    while isinstance(node, (ast.Attribute, ast.Call)):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _default_path_statements(body: list[ast.stmt]):
    """Simple statements reachable with every NON_DEFAULT_FLAGS False, in source order."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            names = {n.id for n in ast.walk(stmt.test) if isinstance(n, ast.Name)}
            if not names & NON_DEFAULT_FLAGS:
                yield from _default_path_statements(stmt.body)
            yield from _default_path_statements(stmt.orelse)
        elif hasattr(stmt, "body"):  # for, while, with, try: their blocks, not their headers
            for block in ("body", "orelse", "finalbody"):
                yield from _default_path_statements(getattr(stmt, block, []))
        else:
            yield stmt


def _step_ops(func: ast.FunctionDef, lines: tuple[str, ...]) -> tuple[Excerpt, ...]:
    found = []
    for stmt in _default_path_statements(func.body):
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and STEP_OPS.get(node.func.attr, "") == _receiver(node)
            ):
                found.append(_excerpt(node.func.attr, func.name, stmt, lines))
    missing = [op for op in STEP_OPS if op not in {e.label for e in found}]
    if missing:
        raise CourseError(
            f"_single_tensor_adam's default path no longer calls {missing} on "
            f"{[STEP_OPS[m] for m in missing]} (torch {torch.__version__}); the "
            "story's table of Adam's ops needs re-checking for this version"
        )
    return tuple(sorted(found, key=lambda e: (e.lineno, list(STEP_OPS).index(e.label))))


# ---- which implementation runs where -----------------------------------------------------------

PATHS = {
    "single-tensor": "aten::addcdiv_",
    "foreach": "aten::_foreach_addcdiv_",
    "fused": "aten::_fused_adam_",
}
DEVICES = ("cpu", "cuda", "mps")


@dataclass(frozen=True)
class PathRule:
    """torch's rule for Adam's default implementation, as read from the installed torch."""

    foreach_devices: tuple[str, ...]
    fused_devices: tuple[str, ...]
    foreach_types: tuple[type, ...]
    adam_asks_for_fused: bool  # adam() calls _default_to_fused_or_foreach(..., use_fused=?)

    def default_path(self, device_type: str, tensor_type: type = torch.Tensor) -> str:
        """The implementation Adam picks when foreach and fused are left as None."""
        eligible = tensor_type in self.foreach_types
        if self.adam_asks_for_fused and eligible and device_type in self.fused_devices:
            return "fused"
        if eligible and device_type in self.foreach_devices:
            return "foreach"
        return "single-tensor"


def _private(module: ModuleType, name: str):
    """A private torch helper the rule lives in; a clear error if a torch version moved it."""
    if not hasattr(module, name):
        raise CourseError(
            f"{module.__name__}.{name} is gone in torch {torch.__version__}: the "
            "course reads Adam's foreach/fused rule from it; update course/adam_source"
        )
    return getattr(module, name)


def read_rule() -> PathRule:
    """Read the device lists, the tensor types and adam()'s use_fused from the installed torch."""
    optimizer_module = importlib.import_module("torch.optim.optimizer")
    foreach_utils = importlib.import_module("torch.utils._foreach_utils")
    rule = _private(optimizer_module, "_default_to_fused_or_foreach")
    rule_text = inspect.getsource(rule)
    for needed in ("_foreach_supported_types", "_get_foreach_kernels_supported_devices"):
        if needed not in rule_text:
            raise CourseError(
                f"_default_to_fused_or_foreach no longer uses {needed}; the table of "
                "default code paths needs re-checking for this torch"
            )
    foreach = _private(foreach_utils, "_get_foreach_kernels_supported_devices")()
    fused = _private(foreach_utils, "_get_fused_kernels_supported_devices")()
    types = tuple(_private(optimizer_module, "_foreach_supported_types"))
    return PathRule(
        tuple(foreach),
        tuple(fused),
        types,
        _adam_use_fused(importlib.import_module("torch.optim.adam")),
    )


def _adam_use_fused(module: ModuleType) -> bool:
    """The `use_fused=` adam() passes to the rule (False: fused is never the default)."""
    tree = ast.parse(inspect.getsource(module))
    for node in ast.walk(find_function(tree, "adam")):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "_default_to_fused_or_foreach"
        ):
            for keyword in node.keywords:
                if keyword.arg == "use_fused" and isinstance(keyword.value, ast.Constant):
                    return bool(keyword.value.value)
    raise CourseError(
        "adam() no longer calls _default_to_fused_or_foreach(..., use_fused=...); "
        "the default-path table needs re-checking for this torch"
    )


def observed_path(device: str = "cpu", **adam_kwargs) -> str:
    """Which implementation one real Adam step ran, told apart by the ops a tracer saw."""
    target = emps.DEVICE if device == "emps" else device
    param = torch.nn.Parameter(torch.ones(3, 2, device=target))
    param.grad = torch.ones(3, 2, device=target)
    opt = torch.optim.Adam([param], **adam_kwargs)
    ops = {r.op.split(".")[0] for r in trace(opt.step)}  # "aten::_foreach_addcdiv_.ScalarList"
    for path, marker in PATHS.items():
        if marker in ops:
            return path
    raise CourseError(
        f"one Adam step on {device} ran none of {sorted(PATHS.values())}; saw {sorted(ops)}"
    )


def code_paths() -> list[dict[str, object]]:
    """Which Adam implementation runs by default on which device, and how we know."""
    rule = read_rule()
    emulated = type(torch.nn.Parameter(torch.zeros(1, device=emps.DEVICE)))
    privateuse1 = torch._C._get_privateuse1_backend_name()
    cases = [(d, torch.Tensor, "rule, and traced" if d == "cpu" else "rule") for d in DEVICES]
    cases += [
        (privateuse1, torch.Tensor, "rule, as if a C++ backend"),
        (privateuse1, emulated, "rule, and traced"),
    ]
    rows = []
    for device, tensor_type, how in cases:
        path = rule.default_path(device, tensor_type)
        if how.endswith("traced"):
            observed = observed_path(device)
            if observed != path:
                raise CourseError(
                    f"torch's rule says {path} on {device}, but a traced step ran "
                    f"{observed}: the rule in course/adam/source.py is out of date"
                )
        rows.append(
            {
                "device": device,
                "parameter type": tensor_type.__name__,
                "foreach kernels": device in rule.foreach_devices,
                "fused kernels": device in rule.fused_devices,
                "default path": path,
                "how we know": how,
            }
        )
    return rows
