"""The dispatcher, read live: which kernels an op has right now, and which ones a call visits.

`tensor.addcmul_(...)` is a C++ binding that hands the call to the dispatcher. The dispatcher
looks at the tensors' *dispatch key set* (CPU, AutogradCPU, ADInplaceOrView, Python, ...) and
calls the kernel registered for the highest-priority key; that kernel does its part (autograd
bookkeeping, version counters) and re-dispatches to the next key, until a backend kernel computes.
Everything here is read from torch's own introspection (`torch._C._dispatch_dump*`), parsed by
content, so the tables are this process's truth, overrides and the emulated device included.

`course.dispatch.registration` changes those tables (override a kernel, define an op);
notebook 05's exercises (`course.dispatch.exercises`) use both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

import torch

from course.dispatch.registration import qualified
from course.errors import CourseError
from course.tables import text_table

# "CPU: registered at /path/RegisterCPU_2.cpp:5809 [kernel]" (from _dispatch_dump_table)
_TABLE_LINE = re.compile(
    r"^(?P<key>\w+): (?P<fallthrough>fallthrough )?registered at (?P<where>.+?)"
    r" \[(?P<kind>[^\]]+)\]$"
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
    "Autograd": "records the backward graph, re-dispatches",
    "ADInplaceOrView": "bumps version counters, re-dispatches",
    "Python": "calls the tensor subclass's __torch_dispatch__",
    "BackendSelect": "picks a backend for factory functions",
    "Functionalize": "rewrites mutations as pure ops (torch.compile)",
}


@dataclass(frozen=True)
class RegisteredKernel:
    """One dispatch-table row: the kernel a key runs, where it was registered, and how.

    (Not `Kernel`: in this course that name means an emulated-device kernel, course.emps.)"""

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
    def stable_file(self) -> str:
        """`file` with a generated file's shard number hidden ("RegisterCPU_2.cpp" ->
        "RegisterCPU_N.cpp"): which shard holds an op changes between torch releases, and a
        checked notebook output must not."""
        return re.sub(r"_\d+\.cpp$", "_N.cpp", self.file)

    @property
    def language(self) -> str:
        """Python for kernels registered with torch.library, C++ for those compiled into torch."""
        return "Python" if self.file.endswith(".py") or "<" in self.where else "C++"


def registered_kernels(op: str) -> list[RegisteredKernel]:
    """The kernels registered for an op, as `_dispatch_dump` lists them (overridden ones too)."""
    name = qualified(op)
    lines = [line for line in torch._C._dispatch_dump(name).splitlines() if line.strip()]
    body = [line for line in lines if not line.startswith(_HEADER)]
    kernels = [_dump_kernel(line) for line in body]
    if body and not any(kernels):
        raise CourseError(
            f"torch._C._dispatch_dump({name!r}) has a format course.dispatch.tables cannot "
            f"read (first line: {body[0]!r}); torch changed, update the parser"
        )
    return [k for k in kernels if k is not None]


def _dump_kernel(line: str) -> RegisteredKernel | None:
    match = _DUMP_LINE.match(line)
    if match is None:
        return None
    return RegisteredKernel(
        key=match["key"],
        where=match["where"],
        kind="registered",
        fallthrough="fallthrough" in match["flags"],
        active=not match["inactive"],
    )


def computed_table(op: str) -> dict[str, RegisteredKernel]:
    """What every runtime key would run for this op, fallbacks and fallthroughs included."""
    name = qualified(op)
    table: dict[str, RegisteredKernel] = {}
    for line in torch._C._dispatch_dump_table(name).splitlines():
        match = _TABLE_LINE.match(line.strip())
        if match:
            table[match["key"]] = RegisteredKernel(
                match["key"], match["where"], match["kind"], fallthrough=bool(match["fallthrough"])
            )
    if not table:
        raise CourseError(
            f"torch._C._dispatch_dump_table({name!r}) has no line course.dispatch.tables "
            "can read; torch changed its format, update the parser"
        )
    return table


def order_keys(keys: torch.DispatchKeySet) -> list[str]:
    """The keys of a set in the order the dispatcher tries them: highest priority first."""
    ordered = []
    remaining = keys
    while (top := remaining.highestPriorityTypeId()) != torch.DispatchKey.Undefined:
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


def backend_key(tensor: torch.Tensor) -> str:
    """The dispatch key of the tensor's device: where a call ends ("CPU", "Meta", "PrivateUse1")."""
    if not isinstance(tensor, torch.Tensor):
        raise CourseError(f"backend_key needs a tensor, not {type(tensor).__name__}")
    return torch._C._dispatch_key_for_device(tensor.device.type)


@dataclass(frozen=True)
class Step:
    """One layer a call passes through: its key, the kernel it runs, and what that layer does."""

    key: str
    kernel: RegisteredKernel
    role: str


def call_path(op: str, tensor: torch.Tensor) -> list[Step]:
    """The kernels a call of `op` on `tensor` runs, in order, down to the one that computes.

    Keys whose entry is a fallthrough are skipped, as the dispatcher skips them. The path ends at
    the tensor's backend key, or at `Python`, where a tensor subclass takes over the call.
    """
    table = computed_table(op)
    backend = backend_key(tensor)
    steps = []
    for key in active_keys(tensor):
        kernel = table.get(key)
        if kernel is None or kernel.fallthrough:
            continue
        last = key in (backend, "Python")
        role = _role(key) if key == "Python" or not last else "computes the result"
        steps.append(Step(key, kernel, role))
        if last:
            return steps
    raise CourseError(
        f"{qualified(op)} has no kernel for {backend} in this process: "
        f"calling it on a {tensor.device.type} tensor would fail"
    )


def _role(key: str) -> str:
    return next((text for prefix, text in ROLES.items() if key.startswith(prefix)), "re-dispatches")


def path_rows(steps: list[Step]) -> list[dict[str, str]]:
    """Rows for a table of a call path (file names only, shard numbers hidden, so outputs are
    the same on every machine and torch release)."""
    return [
        {"key": s.key, "kind": s.kernel.kind, "file": s.kernel.stable_file, "does": s.role}
        for s in steps
    ]


def path_table(op: str, tensor: torch.Tensor) -> str:
    """A call's path as a notebook prints it: the tensor's own dispatch keys, then the kernels
    the call runs (key, file, what it does), narrow enough for a cell and the same on every
    machine and release."""
    keys = ", ".join(dispatch_keys(tensor))
    rows = [
        {k: row[k] for k in ("key", "file", "does")} for row in path_rows(call_path(op, tensor))
    ]
    return f"the tensor's keys, highest priority first: {keys}\n\n{text_table(rows)}"


def kernel_rows(kernels: list[RegisteredKernel]) -> list[dict[str, str]]:
    """Rows for a table of registered kernels."""
    return [
        {
            "key": k.key,
            "file": k.file,
            "language": k.language,
            "state": "active" if k.active else "inactive (overridden)",
        }
        for k in kernels
    ]


def key_summary(op: str, key: str) -> list[str]:
    """The kernels registered for one key as "file (state)": how an override shows up (file
    names as `RegisteredKernel.stable_file` gives them)."""
    return [
        f"{k.stable_file} ({'active' if k.active else 'inactive'})"
        for k in registered_kernels(op)
        if k.key == key
    ]
