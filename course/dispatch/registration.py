"""Changing the dispatcher's tables from Python with `torch.library`, always undoably.

Two things a backend author (or a course) does with the dispatcher: replace the kernel an existing
op runs for one dispatch key (`override_kernel`: how we make the CPU behave like PyTorch 2.2.1's
MPS backend), and define a brand-new operator with its own kernels (`define_op`). Both go through
a `Library` object the course owns, so they can be taken back (see Note [Undoable registrations]).
Names are checked against the live dispatcher first, so a typo gets a "did you mean".
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from course.dispatch.registry import did_you_mean, normalise
from course.errors import CourseError


def qualified(op: str) -> str:
    """The dispatcher's name for an op ("addcmul_" -> "aten::addcmul_"), checked to exist."""
    text = normalise(op)
    name = text if "::" in text else f"aten::{text}"
    if not torch._C._dispatch_dump(name):
        known = torch._C._dispatch_get_all_op_names()
        hint = did_you_mean(name, known, "torch._C._dispatch_get_all_op_names()")
        raise CourseError(f"the dispatcher has no operator {name!r}. {hint}")
    return name


def parse_key(key: str) -> str:
    """A dispatch key name, accepting the emulated device's name for PrivateUse1."""
    if not isinstance(key, str):
        raise CourseError(f"a dispatch key is a name such as 'CPU', not {key!r}")
    name = "PrivateUse1" if key == torch._C._get_privateuse1_backend_name() else key
    try:
        return torch._C._dispatch_key_parse(name).name
    except RuntimeError:
        raise CourseError(
            f"{key!r} is not a dispatch key; use e.g. 'CPU', 'Meta', "
            "'PrivateUse1' (the emps device) or 'AutogradCPU'"
        ) from None


# Note [Undoable registrations]
# torch.library registrations live as long as the Library object that made them, and
# `Library._destroy()` removes them all, leaving the dispatch table exactly as before. So every
# registration in the course goes through a Library we own, destroyed in a `finally:` or before
# re-registering. The process-wide helpers (`torch.library.register_kernel` without `lib=`, or
# C++ `TORCH_LIBRARY`) cannot be undone, and re-running such a notebook cell would fail.


@dataclass
class Override:
    """A live kernel override: how often the replacement ran while it was in place."""

    op: str
    key: str
    calls: int = 0


@contextmanager
def override_kernel(op: str, kernel: Callable, key: str = "CPU") -> Iterator[Override]:
    """Replace an existing op's kernel for one dispatch key, and always put the original back.

    The first override in a process makes torch print a one-time UserWarning about overriding a
    kernel; we silence it here, so notebook outputs are the same on every run.
    """
    name = qualified(op)
    if not callable(kernel):
        raise CourseError(f"kernel must be a function taking the op's arguments, not {kernel!r}")
    dispatch_key = parse_key(key)
    namespace, op_name = name.split("::")
    record = Override(name, dispatch_key)

    def counted(*args, **kwargs):
        record.calls += 1
        return kernel(*args, **kwargs)

    library = torch.library.Library(namespace, "IMPL")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "(?s).*Overriding a previously registered kernel")
            library.impl(op_name, counted, dispatch_key)
        yield record
    finally:
        library._destroy()


def placeholder_addcmul_(self, tensor1, tensor2, *, value=1):
    """addcmul_ the way PyTorch 2.2.1's MPS kernel did it, as a CPU kernel: the result goes into
    a contiguous copy of a non-contiguous output (the Placeholder's silent copy), never back."""
    target = self if self.is_contiguous() else self.contiguous()
    target.copy_(torch.addcmul(self, tensor1, tensor2, value=value))
    return self


@dataclass
class CustomOp:
    """An operator defined from Python, with the Library that owns its registrations."""

    qualname: str
    library: torch.library.Library = field(repr=False)

    @property
    def op(self) -> torch._ops.OpOverload:
        """The callable op: torch.ops.<namespace>.<name>.default."""
        namespace, name = self.qualname.split("::")
        return getattr(getattr(torch.ops, namespace), name).default

    def remove(self) -> None:
        """Undo the definition and all its kernels."""
        self.library._destroy()
        _DEFINED.pop(self.qualname, None)


_DEFINED: dict[str, CustomOp] = {}


def define_op(
    schema: str,
    cpu: Callable,
    fake: Callable | None = None,
    *,
    backward: Callable | None = None,
    setup_context: Callable | None = None,
) -> CustomOp:
    """Define `namespace::name(args) -> ret` with a CPU kernel and optional fake/autograd parts.

    Re-running the same definition (a notebook cell run twice) replaces the earlier one instead
    of failing, because the earlier Library is destroyed first (Note [Undoable registrations]).
    """
    match = re.fullmatch(r"(?P<ns>[a-z_][a-z0-9_]*)::(?P<name>\w+)(?P<rest>\(.*\) -> .+)", schema)
    if match is None or match["ns"] == "aten":
        raise CourseError(
            f"schema {schema!r} must look like 'mynamespace::name(Tensor x) -> Tensor' "
            "with your own lower-case namespace (not aten)"
        )
    qualname = f"{match['ns']}::{match['name']}"
    if qualname in _DEFINED:
        _DEFINED[qualname].remove()
    library = torch.library.Library(match["ns"], "FRAGMENT")
    try:
        library.define(match["name"] + match["rest"])
        library.impl(match["name"], cpu, "CPU")
        if fake is not None:
            torch.library.register_fake(qualname, fake, lib=library)
        if backward is not None:
            torch.library.register_autograd(
                qualname, backward, setup_context=setup_context, lib=library
            )
    except Exception as exc:
        library._destroy()
        raise CourseError(f"could not define {qualname}: {exc}") from exc
    _DEFINED[qualname] = CustomOp(qualname, library)
    return _DEFINED[qualname]
