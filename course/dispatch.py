"""The dispatcher, read live: which kernels an op has right now, and which ones a call visits.

`tensor.addcmul_(...)` is a C++ binding that hands the call to the dispatcher. The dispatcher
looks at the tensors' *dispatch key set* (CPU, AutogradCPU, ADInplaceOrView, Python, ...) and
calls the kernel registered for the highest-priority key; that kernel does its part (autograd
bookkeeping, version counters) and re-dispatches to the next key, until a backend kernel computes.
Everything here is read from torch's own introspection (`torch._C._dispatch_dump*`), parsed by
content, so the tables are this process's truth, overrides and the emulated device included.

`course.registration` changes those tables (override a kernel, define an op); the exercises "05.*"
at the end of this module use both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

import torch

from course.errors import CourseError
from course.exercises import Exercise, Verdict, failed, passed, register
from course.registration import define_op, qualified
from course.registry import backend_kernel, lookup

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


def registered_kernels(op: str) -> list[Kernel]:
    """The kernels registered for an op, as `_dispatch_dump` lists them (overridden ones too)."""
    name = qualified(op)
    lines = [line for line in torch._C._dispatch_dump(name).splitlines() if line.strip()]
    body = [line for line in lines if not line.startswith(_HEADER)]
    kernels = [_dump_kernel(line) for line in body]
    if body and not any(kernels):
        raise CourseError(
            f"torch._C._dispatch_dump({name!r}) has a format course.dispatch cannot "
            f"read (first line: {body[0]!r}); torch changed, update the parser"
        )
    return [k for k in kernels if k is not None]


def _dump_kernel(line: str) -> Kernel | None:
    match = _DUMP_LINE.match(line)
    if match is None:
        return None
    return Kernel(
        key=match["key"],
        where=match["where"],
        kind="registered",
        fallthrough="fallthrough" in match["flags"],
        active=not match["inactive"],
    )


def computed_table(op: str) -> dict[str, Kernel]:
    """What every runtime key would run for this op, fallbacks and fallthroughs included."""
    name = qualified(op)
    table: dict[str, Kernel] = {}
    for line in torch._C._dispatch_dump_table(name).splitlines():
        match = _TABLE_LINE.match(line.strip())
        if match:
            table[match["key"]] = Kernel(
                match["key"], match["where"], match["kind"], fallthrough=bool(match["fallthrough"])
            )
    if not table:
        raise CourseError(
            f"torch._C._dispatch_dump_table({name!r}) has no line course.dispatch "
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
    """Rows for a table of a call path (file names only, so outputs are machine-independent)."""
    return [
        {"key": s.key, "kind": s.kernel.kind, "file": s.kernel.file, "does": s.role} for s in steps
    ]


def kernel_rows(kernels: list[Kernel]) -> list[dict[str, str]]:
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
    """The kernels registered for one key as "file (state)": how an override shows up."""
    return [
        f"{k.file} ({'active' if k.active else 'inactive'})"
        for k in registered_kernels(op)
        if k.key == key
    ]


def keyset_rows(tensors: dict[str, torch.Tensor]) -> list[dict[str, str]]:
    """One row per labelled tensor: its device and its dispatch key set, highest priority first."""
    return [
        {
            "tensor": label,
            "device": str(t.device),
            "type": type(t).__name__,
            "dispatch keys (highest priority first)": ", ".join(dispatch_keys(t)),
        }
        for label, t in tensors.items()
    ]


# ---- exercises "05.*" ------------------------------------------------------------------------

EMA_SQ_SCHEMA = "course05_check::ema_sq(Tensor avg_sq, Tensor grad, float beta) -> Tensor"


def _check_delegate(answer) -> Verdict:
    expected = {
        "delegate": lookup("addcdiv_").structured_delegate,
        "MPS": backend_kernel("addcdiv_", "MPS"),
    }
    if not isinstance(answer, dict) or set(answer) != set(expected):
        return failed(
            "answer with a dict with exactly the keys 'delegate' and 'MPS'", answer, expected
        )
    if answer["delegate"] != expected["delegate"]:
        return failed(
            "'delegate' should be the overload named in addcdiv_'s structured_delegate "
            "field (look it up with lookup('addcdiv_'))",
            answer["delegate"],
            expected["delegate"],
        )
    if answer["MPS"] != expected["MPS"]:
        return failed(
            "'MPS' should be the kernel in the *delegate's* dispatch table for MPS "
            "(addcdiv_ itself has no dispatch table)",
            answer["MPS"],
            expected["MPS"],
        )
    return passed(
        f"addcdiv_ reuses {expected['delegate']}'s kernel; on MPS that is "
        f"{expected['MPS']} in PointwiseOps.mm, the sibling of addcmul's broken kernel."
    )


def _delegate_reference():
    return {
        "delegate": lookup("addcdiv_").structured_delegate,
        "MPS": backend_kernel("addcdiv_", "MPS"),
    }


def _check_call_order(answer) -> Verdict:
    steps = call_path("addcmul_", torch.zeros(2, 3, requires_grad=True))
    expected = [s.key for s in steps]
    if not isinstance(answer, (list, tuple)) or not all(isinstance(k, str) for k in answer):
        return failed(
            "answer with a list of dispatch key names, e.g. ['KeyA', 'KeyB']", answer, expected
        )
    answer = list(answer)
    skipped = [k for k in answer if k not in expected]
    if skipped:
        return failed(
            f"{skipped} never run a kernel here: their entries are fallthroughs, or "
            "the key is excluded on this thread (call_path explains each step)",
            answer,
            expected,
        )
    missing = [k for k in expected if k not in answer]
    if missing:
        return failed(
            f"missing {missing}: each of those runs a kernel on the way down", answer, expected
        )
    if answer != expected:
        return failed(
            "right keys, wrong order: the dispatcher runs the highest-priority key "
            "first, and the backend kernel last",
            answer,
            expected,
        )
    return passed(
        "autograd records the graph, ADInplaceOrView bumps the version counter, "
        "then the CPU kernel computes."
    )


def _call_order_reference():
    return ["AutogradCPU", "ADInplaceOrView", "CPU"]


def _check_custom_op(answer) -> Verdict:
    if not (isinstance(answer, tuple) and len(answer) == 2 and all(map(callable, answer))):
        return failed(
            "answer with a pair of functions: (cpu_kernel, fake_kernel)",
            answer,
            "(cpu_kernel, fake_kernel)",
        )
    custom = define_op(EMA_SQ_SCHEMA, answer[0], answer[1])
    try:
        return _ema_sq_verdict(custom.op)
    finally:
        custom.remove()


def _ema_sq_verdict(op) -> Verdict:
    gen = torch.Generator().manual_seed(0)  # seeded, without touching the global RNG
    samples = (
        ("contiguous", torch.rand(3, 4, generator=gen)),
        ("transposed", torch.rand(4, 3, generator=gen).t()),
    )
    for layout, avg_sq in samples:
        grad, before = torch.randn(3, 4, generator=gen), avg_sq.clone()
        result = op(avg_sq, grad, 0.9)
        expected = 0.9 * before + 0.1 * grad * grad
        if not torch.equal(avg_sq, before):
            return failed(
                "your CPU kernel changed avg_sq in place, but the schema "
                "`Tensor avg_sq` (no `(a!)`) promises it is only read",
                "avg_sq modified",
                "avg_sq unchanged, a new tensor returned",
            )
        if result.shape != expected.shape or not torch.allclose(result, expected):
            return failed(
                f"wrong values on a {layout} avg_sq",
                [round(v, 4) for v in result.flatten()[:3].tolist()],
                [round(v, 4) for v in expected.flatten()[:3].tolist()],
            )
        fake = op(
            torch.empty_strided(avg_sq.shape, avg_sq.stride(), device="meta"),
            torch.empty(grad.shape, device="meta"),
            0.9,
        )
        real = (tuple(result.shape), result.stride(), result.dtype)
        if (tuple(fake.shape), fake.stride(), fake.dtype) != real:
            return failed(
                f"on a {layout} avg_sq your fake kernel's output (shape, stride, dtype) "
                "differs from the real one's; torch.empty_like(avg_sq) keeps its layout",
                (tuple(fake.shape), fake.stride(), fake.dtype),
                real,
            )
    # Only the tests that concern a custom op's own registrations: the aot_dispatch tests also
    # poke every registered device, and the emulated one has no RNG state to save.
    torch.library.opcheck(
        op,
        (torch.rand(4, 3, generator=gen).t(), torch.randn(3, 4, generator=gen), 0.9),
        test_utils=("test_schema", "test_autograd_registration", "test_faketensor"),
    )
    return passed(
        "torch.library.opcheck agrees: schema, CPU kernel and fake kernel are "
        "consistent, on contiguous and transposed inputs."
    )


def _custom_op_reference():
    def cpu_kernel(avg_sq, grad, beta):
        return beta * avg_sq + (1 - beta) * grad * grad

    def fake_kernel(avg_sq, grad, beta):
        return torch.empty_like(avg_sq)

    return cpu_kernel, fake_kernel


register(
    Exercise(
        "05.structured_delegate",
        "Which out= overload does `addcdiv_` delegate to, and which kernel serves it on MPS? "
        "Answer {'delegate': ..., 'MPS': ...}.",
        _check_delegate,
        "lookup('addcdiv_').structured_delegate names the overload; backend_kernel(name, 'MPS') "
        "follows the delegate to its dispatch table.",
        _delegate_reference,
        (
            lambda: {"delegate": "addcdiv", "MPS": "addcdiv_out_mps"},
            lambda: {"delegate": "addcdiv.out", "MPS": "addcdiv_out"},
            lambda: {"delegate": "addcmul.out", "MPS": "addcmul_out_mps"},
        ),
    )
)
register(
    Exercise(
        "05.call_order",
        "`x.addcmul_(a, b)` with x a CPU tensor that requires grad: list the dispatch keys whose "
        "kernels run, in the order they run.",
        _check_call_order,
        "dispatch_keys(x) lists the candidates, highest priority first; call_path('addcmul_', x) "
        "shows which of them actually run a kernel.",
        _call_order_reference,
        (
            lambda: ["CPU", "ADInplaceOrView", "AutogradCPU"],
            lambda: ["AutocastCPU", "AutogradCPU", "ADInplaceOrView", "CPU"],
            lambda: ["AutogradCPU", "CPU"],
        ),
    )
)
register(
    Exercise(
        "05.custom_op",
        f"Write a CPU kernel and a fake kernel for `{EMA_SQ_SCHEMA}` (Adam's second moment, "
        "beta * avg_sq + (1 - beta) * grad**2, as a pure op). Answer (cpu_kernel, fake_kernel).",
        _check_custom_op,
        "The CPU kernel must return a new tensor (no in-place ops on avg_sq); the fake kernel only "
        "allocates an output with the real output's shape, dtype and strides: torch.empty_like.",
        _custom_op_reference,
        (
            lambda: (
                lambda a, g, b: a.mul_(b).addcmul_(g, g, value=1 - b),
                lambda a, g, b: torch.empty_like(a),
            ),
            lambda: (lambda a, g, b: b * a + g * g, lambda a, g, b: torch.empty_like(a)),
            lambda: (lambda a, g, b: b * a + (1 - b) * g * g, lambda a, g, b: a.new_empty(a.shape)),
        ),
    )
)
