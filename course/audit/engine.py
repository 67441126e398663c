"""The layout auditor: which in-place kernels mishandle which layouts, dtypes or arguments?

The story's bug was one kernel forgetting to copy its result back into a non-contiguous output.
The same pattern struck again in the random ops, so instead of guessing where else it hides we
test every candidate: each in-place pointwise or random op the installed torch registers
(`course.audit.args.discover()`), in every dtype it supports, on each layout below, on the target
device, against a reference computed on the CPU (an independent one where possible: see
`course.audit.args.expected_values`).

Layouts (the shape of what the op writes, unless said otherwise):
- `contiguous`: the control; on the CPU it also catches a kernel that is wrong everywhere;
- `transposed`, `step-sliced`, `permuted` (3-D), `channels-last` (4-D): non-contiguous outputs;
- `storage-offset`: contiguous, but starting inside its storage;
- `expanded`: a contiguous output, every tensor *input* broadcast with stride 0;
- `out=transposed`: the op's `out=` variant (`add.out` for `add_.Tensor`) into a transposed `out`;
- `large`: contiguous, but 71,680 elements (`knobs.LARGE`), past the usual size thresholds of a
  kernel (a 4,096- or 16,384-element vector path, a 64K cache or grid), where a size bug hides
  from the 1,536-element sweep; random ops get 47 times the draws there (see `detectable`).

Verdicts:
- `ok`: the output holds the expected values (random ops: every element written, and the
  values follow the reference's distribution; their exact values legitimately depend on layout,
  see pytorch#166856).
- `silent-no-write`: every element a correct write changes still holds its old value (see
  Note [Observable writes] in course/audit/args.py for why that is detectable).
- `wrong-values`: something was written, but not the right thing (zeros, half the elements...).
- `error`: the call raised on the target device although the op supports the dtype;
  `skipped`: nothing to run (a reason says why).

    from course.audit.core import audit
    audit("emulated:2.4-macos14", ops=["normal_"], layouts=["transposed"], dtypes=["float32"])
    python -m course audit --device cpu --json

This module is the sweep only: its command line is `course.audit.cli`, its widget
`course.audit.panel`, and `course.audit.core` names all three's public pieces. Importing it
imports neither the emulated device (`audit("cpu")` works on any torch) nor ipywidgets.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from course.audit.args import (
    SELF,
    SHAPES,
    AuditOp,
    Call,
    build_call,
    describe,
    dtype_name,
    expected,
    find_dtypes,
    find_ops,
    poison,
    seeded,
)
from course.audit.distributions import Law
from course.audit.judge import AuditResult, judge, unchanged
from course.audit.knobs import LARGE, Knobs, broadcast_inputs, tiled
from course.audit.repro import reproduction
from course.devices import mps_available
from course.errors import CourseError
from course.layout.named import DIMS, laid_out, require_layout, span
from course.layout.named import LAYOUTS as NAMED_LAYOUTS
from course.progressbar import Progress

if TYPE_CHECKING:
    from course.emps import Backend

# course.layout.named's, the out= variant, and `large`: contiguous, LARGE elements (a size bug)
LAYOUTS = (*NAMED_LAYOUTS, "out=transposed", "large")
FINDINGS = ("silent-no-write", "wrong-values", "error")  # the results that get a reproduction


@dataclass(frozen=True)
class Target:
    """Where an audit runs: a torch device string and the emulated backend to use, if any."""

    label: str
    device: str
    backend: Backend | None = None
    unavailable: str = ""  # why the device cannot be used here ("" if it can)
    scale: float = 1.0  # tolerance factor: the CPU and the emulation run the CPU's kernels
    emulated: str = ""  # "emulated:PROFILE" for the reproduction line

    @property
    def generator_device(self) -> str:
        """Where private generators live (the emulation's random kernels run on the CPU)."""
        return "cpu" if self.backend is not None else self.device


def target(device: str, backend: Backend | None = None) -> Target:
    """Parse "cpu", "cuda", "mps", "emulated" or "emulated:PROFILE" (or use an emulated backend)."""
    if backend is not None:
        from course import emps

        if not isinstance(backend, emps.Backend):
            raise CourseError(
                f"backend must be an emps.Backend (e.g. emps.redesigned_backend()), not "
                f"{backend!r}; for a profile by name use device='emulated:PROFILE'"
            )
        label = f"emulated ({backend.profile.name}, {backend.design})"
        return Target(label, emps.DEVICE, backend, emulated=_cli_name(backend))
    if not isinstance(device, str):
        raise CourseError(f"device must be a string such as 'cpu' or 'emulated', not {device!r}")
    if device == "emulated" or device.startswith("emulated:"):
        from course import emps  # only here: the CPU audit must work without the emulation

        name = device.partition(":")[2] or emps.DEFAULT_PROFILE
        chosen = emps.Backend(emps.get_profile(name))
        return Target(f"emulated:{name}", emps.DEVICE, chosen, emulated=f"emulated:{name}")
    if device == "cpu":
        return Target("cpu", "cpu")
    if device == "cuda":
        missing = "" if torch.cuda.is_available() else "CUDA is not available on this machine"
        return Target("cuda", "cuda", unavailable=missing, scale=10.0)
    if device == "mps":
        missing = "" if mps_available() else "MPS is not available on this machine"
        return Target("mps", "mps", unavailable=missing, scale=10.0)
    raise CourseError(
        f"unknown device {device!r}; use cpu, cuda, mps, emulated or emulated:PROFILE "
        "(python -c 'from course import emps; print(list(emps.PROFILES))' lists the profiles)"
    )


def _cli_name(backend: Backend) -> str:
    """ "emulated:PROFILE" when the command line can rebuild this backend, else "".

    A backend of its own (a case's planted device, a switchboard's custom profile, the
    redesign) cannot be named on the command line: its findings get the plain PyTorch line,
    on the emulated device, to run where that backend is active (`with case.use_device():`).
    """
    from course import emps

    name = backend.profile.name
    plain = emps.Backend(emps.PROFILES[name]) if name in emps.PROFILES else None
    same = plain is not None and backend.profile is plain.profile and backend.design == plain.design
    return (
        f"emulated:{name}"
        if same and type(backend.overrides) is dict and not backend.overrides
        else ""
    )


def require_layouts(layouts: str | list[str] | None) -> list[str]:
    """The layouts to audit (default: all of LAYOUTS), refusing unknown names."""
    if layouts is None:
        return list(LAYOUTS)
    layouts = [layouts] if isinstance(layouts, str) else layouts
    if not isinstance(layouts, (list, tuple)) or not layouts:
        raise CourseError(f"layouts must be a name or a non-empty list of names, not {layouts!r}")
    return [require_layout(layout, LAYOUTS) for layout in layouts]


def layout_rows() -> list[dict[str, object]]:
    """What each audit layout makes strided: which tensor, its shape and strides, contiguity."""
    rows = []
    for layout in LAYOUTS:
        shape = LARGE if layout == "large" else SHAPES[DIMS.get(layout, 2)]
        named = {"out=transposed": "transposed", "large": "contiguous"}.get(layout, layout)
        tensor = laid_out(torch.zeros(shape), named)
        which = {"expanded": "every input", "out=transposed": "out="}.get(layout, "self")
        rows.append(
            {
                "layout": layout,
                "strided": which,
                "shape": tuple(tensor.shape),
                "stride": tensor.stride(),
                "offset": tensor.storage_offset(),
                "contiguous": tensor.is_contiguous(),
            }
        )
    return rows


def audit(
    device: str = "cpu",
    ops: str | list[str] | None = None,
    layouts: str | list[str] | None = None,
    dtypes: str | list[str] | None = None,
    *,
    backend: Backend | None = None,
    progress: Progress | None = None,
    shape: tuple[int, ...] | None = None,
    scalars: float | tuple[float, ...] | None = None,
    inputs: str = "fresh",
) -> list[AuditResult]:
    """Audit in-place ops; one AuditResult per (op, dtype it supports, layout that applies).

    `shape`, `scalars` and `inputs` change the calls to test a hypothesis the default sweep
    does not (course.audit.knobs).
    """
    if progress is not None and not callable(progress):
        raise CourseError(
            f"progress={progress!r} is not allowed: give None or a function called as "
            "progress(done, total, op_name) after each op (e.g. print-based, or the widget's)"
        )
    where = target(device, backend)
    chosen, shapes, kinds = find_ops(ops), require_layouts(layouts), find_dtypes(dtypes)
    knobs = Knobs.of(shape, scalars, inputs)
    results = []
    for index, op in enumerate(chosen):
        if progress is not None:
            progress(index + 1, len(chosen), op.name)
        results += _reported(op, shapes, kinds, where, knobs)
    return results


def _reported(
    op: AuditOp,
    layouts: list[str],
    dtypes: list[torch.dtype],
    where: Target,
    knobs: Knobs | None = None,
) -> list[AuditResult]:
    """`audit_op`, but a failure of the auditor's own work is a result, never a crash.

    Building values, references and verdicts runs torch kernels too (`mul`, `isclose`, `sort`);
    when one of those is the broken one (a planted bug that fails on a wrapped scalar, say),
    the audit of this op reports it and the sweep goes on.
    """
    try:
        return audit_op(op, layouts, dtypes, where, knobs)
    except Exception as exc:
        detail = (
            f"auditing it failed: {describe(exc)} (a kernel the auditor itself uses to build "
            "values or judge them may be broken)"
        )
        return [AuditResult(op.name, "all", "error", detail, op.kind)]


def audit_op(
    op: AuditOp,
    layouts: list[str],
    dtypes: list[torch.dtype],
    where: Target,
    knobs: Knobs | None = None,
) -> list[AuditResult]:
    """Every (dtype, layout) result for one op; one skipped row per layout if no dtype runs."""
    if where.unavailable:
        return [
            AuditResult(op.name, layout, "skipped", where.unavailable, op.kind)
            for layout in layouts
        ]
    results, reasons, hint = [], {}, None
    scalars = knobs.scalars if knobs is not None else None
    for dtype in dtypes:
        call = build_call(op, dtype, hint, scalars)
        if isinstance(call, str):
            reasons[dtype_name(dtype)] = call
            continue
        hint = hint or (call.domain if dtype.is_floating_point else None)
        if knobs is not None and not knobs.default:
            call = knobs.apply(op, call)
        rows = _audit_dtype(op, call, layouts, where)
        if isinstance(rows, str):
            reasons[dtype_name(dtype)] = rows
        else:
            results += rows
    if results:
        return results
    why = "; ".join(f"{name}: {reason}" for name, reason in reasons.items())
    return [AuditResult(op.name, "all", "skipped", why, op.kind)]


def _audit_dtype(op: AuditOp, call: Call, layouts: list[str], where: Target):
    """The results for one dtype, or why the device does not support it.

    On the CPU, and on the emulated device (which runs the CPU's kernels), the reference decides
    which dtypes the op supports (the functional twin, or for a random op its law), so a kernel
    that raises on every layout is an `error`; the emulated device only refuses whole dtypes
    (float64, as MPS did). On a real GPU a dtype the contiguous call refuses is not supported
    there (MPS has no int64 `lgamma_`, say), which is not a layout bug.
    """
    try:
        if where.backend is not None:
            _on_device(torch.zeros(1, dtype=call.dtype), where)
        elif where.device != "cpu":
            _run(op, call, "contiguous", where)
    except CourseError as exc:
        return f"the emulated device cannot run it: {exc}"
    except Exception as exc:
        return f"not supported on {where.label} ({describe(exc)})"
    wanted = functools.cache(lambda key: expected(op, _variant(call, key)))
    return [
        _audit_layout(op, call, layout, where, wanted)
        for layout in layouts
        if _applies(op, call, layout)
    ]


def _applies(op: AuditOp, call: Call, layout: str) -> bool:
    if call.knobs is not None and call.knobs.shape_for(layout) is None:
        return False  # a layout of another rank than the knob's shape
    if layout == "out=transposed" and SELF in (*call.args, *call.kwargs.values()):
        return False  # an out= tensor is new: it cannot also be an operand
    if layout == "expanded":
        return call.tensor_inputs and op.kind == "pointwise"
    if layout == "large" and op.kind == "random" and call.dtype == torch.bfloat16:
        # bfloat16 rounds a draw by up to 2^-8 of its value: with 71,680 draws the tests see
        # the rounding itself (a CPU uniform_ mean 0.4971 for 0.5), not a kernel's bug
        return False
    if layout == "out=transposed":
        return op.out is not None
    return True


def _variant(call: Call, layout: str) -> Call:
    """The call a layout runs: the same values in its shape, or with row-constant inputs."""
    knobs = call.knobs or Knobs()
    if layout == "large":
        variant = call.map_tensors(lambda t: tiled(t, LARGE), self_too=True)
    else:
        variant = call.shaped(knobs.shape_for(layout))
    variant = variant.expanded() if layout == "expanded" else variant
    return broadcast_inputs(variant) if knobs.inputs == "broadcast" else variant


def _reference_key(layout: str) -> str:
    """Layouts that see the same values share one reference computation."""
    return layout if layout in ("expanded", "large", *DIMS) else "contiguous"


def _audit_layout(op: AuditOp, call: Call, layout: str, where: Target, expected) -> AuditResult:
    dtype = dtype_name(call.dtype)

    def result(verdict: str, detail: str) -> AuditResult:
        line = ""
        if verdict in FINDINGS:
            line = reproduction(op, call, layout, where.device, where.emulated)
        return AuditResult(op.name, layout, verdict, detail, op.kind, dtype, line)

    want = expected(_reference_key(layout))
    before = _before(call, layout, want)
    if op.kind == "pointwise" and bool(unchanged(want, before).all()):
        return result("skipped", "a correct write would change nothing with these inputs")
    try:
        after, outside = _run(op, call, layout, where, before)
    except CourseError as exc:  # the emulator's own limits, not a kernel bug
        return result("skipped", f"the emulated device cannot run it: {exc}")
    except Exception as exc:  # the kernel under audit raised: that is the finding
        return result("error", describe(exc))
    verdict, detail = judge(before, after, want, outside=outside, scale=where.scale)
    return result(verdict, detail)


def _before(call: Call, layout: str, want: torch.Tensor | Law) -> torch.Tensor:
    """What the written tensor holds before the call (see Note [Observable writes])."""
    variant = _variant(call, layout)
    if layout != "out=transposed":
        return variant.self_values
    if call.dtype == torch.bool:
        return ~want
    return poison(tuple(variant.self_values.shape), call.dtype)


def _backend(where: Target) -> contextlib.AbstractContextManager:
    """The emulated backend's `use_backend` block, or nothing for a real device."""
    if where.backend is None:
        return contextlib.nullcontext()
    from course import emps

    return emps.use_backend(where.backend)


def _on_device(values: torch.Tensor, where: Target) -> torch.Tensor:
    with _backend(where):
        return values.to(where.device)


GUARD = 32  # storage slots after every output, which a correct kernel never writes


def _guarded(values: torch.Tensor, layout: str, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """`values` laid out on `device` inside a storage of sentinels: (the output, its storage).

    The storage holds the layout's own slots (the gap before a storage-offset tensor, the holes
    of a step-sliced one) and GUARD more after the output; all of them hold a sentinel that
    only a write outside the output's view can change.
    """
    template = laid_out(values, layout)  # the layout's sizes, strides and offset, on the CPU
    slots = template.storage_offset() + span(template) + GUARD
    storage = torch.full((slots,), _sentinel(values.dtype), dtype=values.dtype, device=device)
    view = storage.as_strided(template.shape, template.stride(), template.storage_offset())
    view.copy_(template.to(device))
    return view, storage


def _sentinel(dtype: torch.dtype) -> bool | int | float:
    if dtype == torch.bool:
        return True  # two values only: a write of True outside the view goes unseen
    return 1234.5 if dtype.is_floating_point else 0x5A5A5A5A


def _outside(view: torch.Tensor, storage: torch.Tensor) -> int:
    """How many storage slots outside the view no longer hold the sentinel."""
    inside = torch.zeros(storage.shape, dtype=torch.bool)
    inside.as_strided(view.shape, view.stride(), view.storage_offset()).fill_(True)
    slots = storage.cpu()
    changed = slots != torch.full_like(slots, _sentinel(slots.dtype))
    return int((changed & ~inside).sum())


def _run(
    op: AuditOp, call: Call, layout: str, where: Target, before: torch.Tensor | None = None
) -> tuple[torch.Tensor, int]:
    """Run the op on the target device with the layout: what it wrote (on the CPU), and how
    many guard slots around the output it changed.

    `before` is what an `out=` tensor starts with (the poison); in-place ops start from `self`.
    """
    variant = _variant(call, layout)
    with _backend(where):
        inputs = "expanded" if layout == "expanded" else "contiguous"

        if layout == "out=transposed":
            out, storage = _guarded(before, "transposed", where.device)
        else:
            own = "contiguous" if layout in ("expanded", "large") else layout
            out, storage = _guarded(variant.self_values, own, where.device)

        def move(value: object) -> object:
            if value is SELF:  # an aliased operand: the output itself
                return out
            if not isinstance(value, torch.Tensor):
                return value
            if inputs == "expanded" and value.shape != out.shape:
                # an operand the op broadcasts (inputs="broadcast"): passed with stride 0 as
                # the whole broadcast row, never as its first element repeated
                return value.to(where.device).expand(out.shape)
            return laid_out(value, inputs, where.device)

        args = [move(a) for a in variant.args]
        kwargs = {k: move(v) for k, v in variant.kwargs.items()}
        if "generator" in kwargs:  # random ops draw from a private generator, never the global one
            kwargs["generator"] = seeded(where.generator_device)
        if layout == "out=transposed":
            op.out(variant.self_values.to(where.device), *args, **kwargs, out=out)
        else:
            op.overload(out, *args, **kwargs)
        return out.cpu(), _outside(out, storage)
