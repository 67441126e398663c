"""A tiny language for chains of view operations: "T; [:, ::2]; unsqueeze(0)".

Why a language and not Python: the stride explorer takes the chain from a text box, and a text
box must never run code. Each step is parsed with `ast.parse` (which builds a syntax tree and
executes nothing) and only a handful of node types are accepted: integers, tuples of integers,
slices, `None`, `...` and the names of memory formats. Anything else is refused with a message
naming the step, what was wrong and what is allowed. The parsed `Op`s feed both the pure layout
calculator (`course.layout.calculator.apply`) and real torch
(`course.layout.calculator.apply_torch`), so the two can be compared op by op.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from course.errors import CourseError

SYNTAX = (
    "T, t(), transpose(d0, d1), permute(d0, d1, ...), [i, a:b:c, None, ...], "
    "narrow(dim, start, length), expand(s0, s1, ...), unsqueeze(dim), squeeze() or squeeze(dim), "
    "view(s0, s1, ...), reshape(s0, s1, ...), as_strided((sizes), (strides), offset), "
    "unfold(dim, size, step), contiguous(), clone() or clone(contiguous_format)"
)
# name -> (min, max) number of arguments; a *shape* op takes its sizes spread or as one tuple.
_ARITY = {
    "t": (0, 0),
    "transpose": (2, 2),
    "narrow": (3, 3),
    "unsqueeze": (1, 1),
    "squeeze": (0, 1),
    "as_strided": (2, 3),
    "unfold": (3, 3),
    "contiguous": (0, 0),
    "clone": (0, 1),
}
_SHAPE_OPS = ("permute", "expand", "view", "reshape")
MEMORY_FORMATS = ("preserve_format", "contiguous_format")


@dataclass(frozen=True)
class Op:
    """One view operation: a name and its arguments (ints, tuples, slices, None, Ellipsis)."""

    name: str
    args: tuple = ()

    def __str__(self) -> str:
        if self.name == "index":
            return "[" + ", ".join(_item_text(item) for item in self.args) + "]"
        if self.name == "T":
            return "T"
        if self.name in _SHAPE_OPS:
            return f"{self.name}({', '.join(str(a) for a in self.args[0])})"
        return f"{self.name}({', '.join(_arg_text(a) for a in self.args)})"


def _item_text(item: object) -> str:
    if item is Ellipsis:
        return "..."
    if isinstance(item, slice):
        text = ("" if item.start is None else str(item.start)) + ":"
        text += "" if item.stop is None else str(item.stop)
        return text + ("" if item.step is None else f":{item.step}")
    return str(item)


def _arg_text(arg: object) -> str:
    if isinstance(arg, tuple):
        return "(" + ", ".join(str(a) for a in arg) + ("," if len(arg) == 1 else "") + ")"
    return str(arg)


def chain_text(ops: list[Op] | tuple[Op, ...]) -> str:
    """The text form of a chain, which `parse_chain` reads back to the same ops."""
    return "; ".join(str(op) for op in ops)


def parse_chain(text: str) -> list[Op]:
    """Parse "T; [:, ::2]; unsqueeze(0)" into Ops; an empty text is an empty chain."""
    if not isinstance(text, str):
        raise CourseError(f"a chain of ops is text like 'T; [:, ::2]; unsqueeze(0)', not {text!r}")
    steps = [s.strip() for s in text.split(";")]
    if steps == [""]:
        return []
    ops = []
    for number, step in enumerate(steps, start=1):
        if not step:
            raise CourseError(f"step {number} is empty: remove the extra ';'")
        try:
            ops.append(parse_step(step))
        except CourseError as exc:
            raise CourseError(f"step {number} {step!r}: {exc}") from None
    return ops


def parse_step(step: str) -> Op:
    """Parse one step, e.g. "transpose(0, 1)", ".T" or "[1:, ::2]"."""
    source = step[1:] if step.startswith(".") else step
    source = "x" + source if source.startswith("[") else source
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        where = f" at character {max(exc.offset - 1, 1)}" if exc.offset else ""
        raise CourseError(f"not valid syntax{where} ({exc.msg}); allowed steps: {SYNTAX}") from None
    if isinstance(node, ast.Subscript) and source.startswith("x["):
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return Op("index", tuple(_index_item(item) for item in items))
    if isinstance(node, ast.Name) and node.id == "T":
        return Op("T")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _call(node.func.id, node)
    raise CourseError(f"not a view operation; allowed steps: {SYNTAX}")


def _call(name: str, node: ast.Call) -> Op:
    if name not in _ARITY and name not in _SHAPE_OPS:
        raise CourseError(f"unknown operation {name!r}; allowed steps: {SYNTAX}")
    args = [_value(a) for a in node.args]
    for keyword in node.keywords:
        if (name, keyword.arg) in (("clone", "memory_format"), ("as_strided", "storage_offset")):
            args.append(_value(keyword.value))
        else:
            raise CourseError(f"{name}() takes no keyword {keyword.arg!r}; pass arguments in order")
    if name in _SHAPE_OPS:
        return Op(name, (_shape_arg(name, args),))
    low, high = _ARITY[name]
    if not low <= len(args) <= high:
        wanted = str(low) if low == high else f"{low} to {high}"
        raise CourseError(f"{name}() takes {wanted} arguments, got {len(args)}")
    if name == "clone":
        return Op("clone", tuple(_memory_format(a) for a in args))
    if name == "as_strided":
        _require_ints(name, args[2:])
        if not all(isinstance(a, tuple) for a in args[:2]):
            raise CourseError("as_strided() needs a tuple of sizes and a tuple of strides first")
        return Op(name, tuple(args))
    _require_ints(name, args)
    return Op(name, tuple(args))


def _shape_arg(name: str, args: list) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], tuple):
        return args[0]
    _require_ints(name, args)
    return tuple(args)


def _require_ints(name: str, args: list) -> None:
    for arg in args:
        if not isinstance(arg, int):
            raise CourseError(f"{name}() expects whole numbers here, got {_arg_text(arg)}")


def _memory_format(arg: object) -> str:
    if arg not in MEMORY_FORMATS:
        raise CourseError(
            f"clone() takes a memory format ({', '.join(MEMORY_FORMATS)}), got {arg!r}"
        )
    return arg


def _value(node: ast.AST) -> object:
    """An int, a tuple of ints, or a memory-format name; nothing else is accepted."""
    if isinstance(node, (ast.Tuple, ast.List)):
        values = tuple(_value(e) for e in node.elts)
        if not all(isinstance(v, int) for v in values):
            raise CourseError("a tuple may hold only whole numbers")
        return values
    is_torch = isinstance(node, ast.Attribute) and getattr(node.value, "id", "") == "torch"
    if is_torch and node.attr in MEMORY_FORMATS:
        return node.attr
    if isinstance(node, ast.Name) and node.id in MEMORY_FORMATS:
        return node.id
    return _int(node)


def _int(node: ast.AST) -> int:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_int(node.operand)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    raise CourseError(f"expected a whole number, got {ast.unparse(node)!r}")


def _index_item(node: ast.AST) -> object:
    if isinstance(node, ast.Slice):
        parts = (node.lower, node.upper, node.step)
        return slice(*(None if p is None else _int(p) for p in parts))
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return Ellipsis
    return _int(node)


def parse_ints(text: str, what: str) -> tuple[int, ...]:
    """Parse "4, 6" or "(4, 6)" into a tuple of ints; `what` names the field in errors."""
    body = text.strip().strip("()[]").strip()
    if not body:
        return ()
    try:
        node = ast.parse(f"({body},)", mode="eval").body
        return tuple(_int(e) for e in node.elts)
    except (SyntaxError, CourseError):
        example = "write whole numbers separated by commas, like 4, 6"
        raise CourseError(f"{what} {text!r}: {example}") from None
