"""A learner copy's blanks: what "not attempted yet" means, whatever the answer's type.

A learner copy's blanks (`...`, a function or method that still raises
`NotImplementedError("your code here")`, an empty class or function body), alone or inside a
dict, tuple or list, are "not attempted yet" whatever their type: such a check is not journaled,
so "Run All" on an untouched copy records nothing.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types
from collections.abc import Callable
from typing import Any

from course.exercises.verdicts import Verdict, not_attempted

SCAFFOLD = "your code here"  # the learner copies' `raise NotImplementedError("your code here")`


def is_scaffold(exc: BaseException) -> bool:
    """The learner copy's untouched `raise NotImplementedError("your code here")`."""
    return isinstance(exc, NotImplementedError) and str(exc) == SCAFFOLD


def untouched(answer: object, label: str = "your answer") -> list[str]:
    """The parts of an answer that are still a learner copy's blank, by name; [] when none is.

    Blank: `...` given as the answer; a function or method that still holds the scaffold's
    `raise NotImplementedError("your code here")`; a function whose body is only `pass` or
    `...`; a class with nothing in it. A dict, tuple or list is looked into, so a dict of three
    scaffold functions is as blank as one. None is not blank: no learner copy leaves it, and it
    is what a function that prints instead of returning gives (`check` says so).
    """
    return _blank_parts(answer, label)


def _blank_parts(answer: object, label: str) -> list[str]:
    if answer is Ellipsis:
        return [label]
    if isinstance(answer, dict):
        return [part for key, value in answer.items() for part in _blank_parts(value, str(key))]
    if isinstance(answer, tuple | list):
        return [part for value in answer for part in _blank_parts(value, label)]
    if isinstance(answer, functools.partial):
        return _blank_parts(answer.func, label)
    if inspect.isclass(answer):
        return _blank_class(answer)
    if isinstance(answer, types.FunctionType | types.MethodType):
        function = getattr(answer, "__func__", answer)
        return [function.__name__] if _blank_function(function) else []
    return []


def _blank_class(cls: type) -> list[str]:
    """A class defined by the learner: its scaffold methods, or the class itself when empty."""
    own = [k for k in vars(cls) if not (k.startswith("__") and k.endswith("__"))]
    methods = {
        name: getattr(value, "__func__", getattr(value, "fget", value))
        for name, value in vars(cls).items()
        if isinstance(value, types.FunctionType | staticmethod | classmethod | property)
    }
    if not own and not methods and cls.__bases__ == (object,):  # `class X: pass`
        return [cls.__name__]
    return [
        f"{cls.__name__}.{name}"
        for name, function in methods.items()
        if isinstance(function, types.FunctionType) and _holds_scaffold(function.__code__)
    ]


def _blank_function(function: types.FunctionType) -> bool:
    return _holds_scaffold(function.__code__) or _empty_body(function)


def _holds_scaffold(code: types.CodeType) -> bool:
    """Whether compiled code (or a function nested in it) still holds the scaffold's raise."""
    return any(
        const == SCAFFOLD or (isinstance(const, types.CodeType) and _holds_scaffold(const))
        for const in code.co_consts
    )


def _empty_body(function: types.FunctionType) -> bool:
    """A `def f(...): pass` (or `...`, or only a docstring): nothing written yet."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):  # no source (a lambda in an expression, a builtin)
        return False
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = node.body[1:] if ast.get_docstring(node) is not None else node.body
    return all(
        isinstance(s, ast.Pass)
        or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is ...)
        for s in body
    )


def blank(answer: object) -> Verdict | None:
    """A "not attempted yet" verdict (never journaled) for a blank answer, else None.

    Checkers that take answers apart may call it on a part; `check` calls it on the whole."""
    parts = untouched(answer)
    if not parts:
        return None
    if parts == ["your answer"]:
        return not_attempted("replace the `...` with your answer, then run the cell.")
    names = ", ".join(parts)
    return not_attempted(
        f"{names} {'is' if len(parts) == 1 else 'are'} still blank: write "
        f"{'it' if len(parts) == 1 else 'them'} in place of "
        f'`raise NotImplementedError("{SCAFFOLD}")` (or `pass`), then run the cell.'
    )


def blank_error(exc: BaseException) -> Verdict | None:
    """A "not attempted yet" verdict when the learner's code raised the scaffold, else None."""
    if not is_scaffold(exc):
        return None
    return not_attempted("your code still raises NotImplementedError: write it, then run the cell.")


def watched_for_scaffold(answer: Any) -> tuple[Any, Callable[[], bool]]:
    """The answer, and a probe: did the learner's function raise the untouched scaffold?

    A blank function is caught before any checker runs (`blank`); this catches a function that
    calls a blank one. A checker may catch the learner's exceptions itself (to say on which
    variant it went wrong), so `check` cannot rely on seeing the NotImplementedError; the
    wrapper notes it. Only the scaffold's own message counts: a NotImplementedError from torch
    (an op a device lacks) is a real answer's failure, not a blank one.
    """
    if not inspect.isfunction(answer):
        return answer, lambda: False
    seen: list[bool] = []

    @functools.wraps(answer)
    def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            return answer(*args, **kwargs)
        except NotImplementedError as exc:
            seen.append(is_scaffold(exc))
            raise

    return watched, lambda: any(seen)
