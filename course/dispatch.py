"""The dispatcher, read live: which kernels an op has right now, and which ones a call visits.

`tensor.addcmul_(...)` is a C++ binding that hands the call to the dispatcher. The dispatcher
looks at the tensors' *dispatch key set* (CPU, AutogradCPU, ADInplaceOrView, Python, ...) and
calls the kernel registered for the highest-priority key; that kernel does its part (autograd
bookkeeping, version counters) and re-dispatches to the next key, until a backend kernel computes.
Everything here is read from torch's own introspection (`torch._C._dispatch_dump*`), parsed by
content, so the tables are this process's truth, overrides and the emulated device included.

`override_kernel` and `define_op` change those tables with `torch.library`, each through its own
`Library` object that is destroyed afterwards (see Note [Undoable registrations]).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import PurePath

import torch

from course.errors import CourseError
from course.registry import did_you_mean, normalise

# "CPU: registered at /path/RegisterCPU_2.cpp:5809 [kernel]" (from _dispatch_dump_table)
_TABLE_LINE = re.compile(
    r"^(?P<key>\w+): (?P<fallthrough>fallthrough )?registered at (?P<where>.+?) \[(?P<kind>[^\]]+)\]$"
)
# "CPU (inactive): registered at /path/RegisterCPU_2.cpp:5809 :: (Tensor _0, ...) [ boxed ]"
_DUMP_LINE = re.compile(
    r"^(?P<key>\w+(\[alias\])?)(?P<inactive> \(inactive\))?: registered at (?P<where>.+?)"
    r" :: .*\[(?P<flags>[^\]]*)\]$"
)
_HEADER = ("name:", "schema:", "debug:", "alias analysis kind:")

# What each layer does when a call passes through it (keys named by prefix).
ROLES = {
    "PythonTLSSnapshot": "saves Python dispatch state, re-dispatches",
    "Autocast": "casts dtypes under autocast, re-dispatches",
    "Autograd": "records the backward graph (VariableType), re-dispatches",
    "ADInplaceOrView": "bumps the version counter of written tensors, re-dispatches",
    "Python": "calls the tensor subclass's __torch_dispatch__",
    "BackendSelect": "picks a backend for factory functions",
    "Functionalize": "rewrites mutations as pure ops (torch.compile)",
}


@dataclass(frozen=True)
class Kernel:
    """One dispatch-table row: the kernel a key runs, where it was registered, and how."""

    key: str
    where: str  # "file:line" as torch reports it (a C++ file, or a Python file for torch.library)
    kind: str  # "kernel", "autograd kernel", "backend fallback", "default backend kernel", ...
    fallthrough: bool = False
    active: bool = True

    @property
    def file(self) -> str:
        """The file name alone, without folders or line number: stable across machines."""
        return PurePath(self.where.rsplit(":", 1)[0]).name

    @property
    def language(self) -> str:
        """Python for kernels registered with torch.library, C++ for those compiled into torch."""
        return "Python" if self.file.endswith(".py") or "<" in self.where else "C++"


def qualified(op: str) -> str:
    """The dispatcher's name for an op ("addcmul_" -> "aten::addcmul_"), checked to exist."""
    text = op.strip() if isinstance(op, str) else op
    name = text if isinstance(text, str) and "::" in text and not text.startswith("aten::") else None
    name = (name or f"aten::{normalise(op)}").removesuffix(".default")
    if not torch._C._dispatch_dump(name):
        known = torch._C._dispatch_get_all_op_names()
        raise CourseError(f"the dispatcher has no operator {name!r}. {did_you_mean(name, known)}")
    return name


def registered_kernels(op: str) -> list[Kernel]:
    """The kernels registered for an op, as `_dispatch_dump` lists them (overridden ones too)."""
    name = qualified(op)
    lines = [line for line in torch._C._dispatch_dump(name).splitlines() if line.strip()]
    body = [line for line in lines if not line.startswith(_HEADER)]
    kernels = [_dump_kernel(line) for line in body]
    if body and not any(kernels):
        raise CourseError(f"torch._C._dispatch_dump({name!r}) has a format course.dispatch cannot "
                          f"read (first line: {body[0]!r}); torch changed, update the parser")
    return [k for k in kernels if k is not None]


def _dump_kernel(line: str) -> Kernel | None:
    match = _DUMP_LINE.match(line)
    if match is None:
        return None
    return Kernel(key=match["key"], where=match["where"], kind="registered",
                  fallthrough="fallthrough" in match["flags"], active=not match["inactive"])


def computed_table(op: str) -> dict[str, Kernel]:
    """What every runtime key would run for this op, fallbacks and fallthroughs included."""
    name = qualified(op)
    table: dict[str, Kernel] = {}
    for line in torch._C._dispatch_dump_table(name).splitlines():
        match = _TABLE_LINE.match(line.strip())
        if match:
            table[match["key"]] = Kernel(match["key"], match["where"], match["kind"],
                                         fallthrough=bool(match["fallthrough"]))
    if not table:
        raise CourseError(f"torch._C._dispatch_dump_table({name!r}) has no line course.dispatch "
                          "can read; torch changed its format, update the parser")
    return table


def order_keys(keys: torch.DispatchKeySet) -> list[str]:
    """The keys of a set in the order the dispatcher tries them: highest priority first."""
    ordered = []
    remaining = keys
    while remaining != torch._C._dispatch_keyset_full() - torch._C._dispatch_keyset_full():
        top = remaining.highestPriorityTypeId()
        ordered.append(top.name)
        remaining = remaining.remove(top)
    return ordered


def dispatch_keys(tensor: torch.Tensor) -> list[str]:
    """A tensor's own dispatch key set, highest priority first."""
    if not isinstance(tensor, torch.Tensor):
        raise CourseError(f"dispatch_keys needs a tensor, not {type(tensor).__name__}")
    return order_keys(torch._C._dispatch_keys(tensor))


def active_keys(tensor: torch.Tensor) -> list[str]:
    """The keys a call on `tensor` really consults: its set, plus this thread's included keys
    (ADInplaceOrView, BackendSelect, an active TorchDispatchMode), minus excluded ones (Autocast
    unless autocast is on), highest priority first."""
    keys = torch._C._dispatch_keys(tensor) | torch._C._dispatch_tls_local_include_set()
    return order_keys(keys - torch._C._dispatch_tls_local_exclude_set())


@dataclass(frozen=True)
class Step:
    """One layer a call passes through: its key, the kernel it runs, and what that layer does."""

    key: str
    kernel: Kernel
    role: str


def call_path(op: str, tensor: torch.Tensor) -> list[Step]:
    """The kernels a call of `op` on `tensor` runs, in order, down to the one that computes.

    Keys whose entry is a fallthrough are skipped, as the dispatcher skips them. The path ends at
    the tensor's backend key, or at `Python`, where a tensor subclass takes over the call.
    """
    table = computed_table(op)
    backend = torch._C._dispatch_key_for_device(tensor.device.type)
    steps = []
    for key in active_keys(tensor):
        kernel = table.get(key)
        if kernel is None or kernel.fallthrough:
            continue
        last = key in (backend, "Python")
        steps.append(Step(key, kernel, "computes the result" if last else _role(key)))
        if last:
            return steps
    raise CourseError(f"{qualified(op)} has no kernel for {backend} in this process: "
                      f"calling it on a {tensor.device.type} tensor would fail")


def _role(key: str) -> str:
    return next((text for prefix, text in ROLES.items() if key.startswith(prefix)), "re-dispatches")


def path_rows(steps: list[Step]) -> list[dict[str, str]]:
    """Rows for a table of a call path (file names only, so outputs are machine-independent)."""
    return [{"key": s.key, "kind": s.kernel.kind, "file": s.kernel.file, "does": s.role}
            for s in steps]


def kernel_rows(kernels: list[Kernel]) -> list[dict[str, str]]:
    """Rows for a table of registered kernels."""
    return [{"key": k.key, "file": k.file, "language": k.language,
             "state": "active" if k.active else "inactive (overridden)"} for k in kernels]


def parse_key(key: str) -> str:
    """A dispatch key name, accepting the emulated device's name for PrivateUse1."""
    if not isinstance(key, str):
        raise CourseError(f"a dispatch key is a name such as 'CPU', not {key!r}")
    name = "PrivateUse1" if key == torch._C._get_privateuse1_backend_name() else key
    try:
        return torch._C._dispatch_key_parse(name).name
    except RuntimeError:
        raise CourseError(f"{key!r} is not a dispatch key; use e.g. 'CPU', 'Meta', "
                          "'PrivateUse1' (the emps device) or 'AutogradCPU'") from None


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


def define_op(schema: str, cpu: Callable, fake: Callable | None = None, *,
              backward: Callable | None = None, setup_context: Callable | None = None) -> CustomOp:
    """Define `namespace::name(args) -> ret` with a CPU kernel and optional fake/autograd parts.

    Re-running the same definition (a notebook cell run twice) replaces the earlier one instead
    of failing, because the earlier Library is destroyed first (Note [Undoable registrations]).
    """
    match = re.fullmatch(r"(?P<ns>[a-z_][a-z0-9_]*)::(?P<name>\w+)(?P<rest>\(.*\) -> .+)", schema)
    if match is None or match["ns"] == "aten":
        raise CourseError(f"schema {schema!r} must look like 'mynamespace::name(Tensor x) -> Tensor' "
                          "with your own lower-case namespace (not aten)")
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
            torch.library.register_autograd(qualname, backward, setup_context=setup_context,
                                            lib=library)
    except Exception as exc:
        library._destroy()
        raise CourseError(f"could not define {qualname}: {exc}") from exc
    _DEFINED[qualname] = CustomOp(qualname, library)
    return _DEFINED[qualname]
