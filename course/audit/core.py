"""The layout auditor: which in-place kernels mishandle non-contiguous outputs, on any backend?

The story's bug was one kernel forgetting to copy its result back into a non-contiguous output.
The same pattern struck again in the random ops, so instead of guessing where else it hides we
test every candidate: each in-place pointwise or random op the installed torch registers
(`course.audit.args.discover()`), on each non-contiguous output layout, on the target device,
against a contiguous reference computed on the CPU.

Verdicts:
- `ok`: the output holds the reference values (random ops: every element written, and the
  values follow the reference's distribution; their exact values legitimately depend on layout,
  see pytorch#166856).
- `silent-no-write`: the output still holds what it held before the call (see
  Note [Observable writes] in course/audit/args.py for why that is detectable).
- `wrong-values`: something was written, but not the right thing (e.g. zeros).
- `error`: the call raised on the target device; `skipped`: nothing to run (a reason says why).

    from course.audit.core import audit
    audit("emulated:2.4-macos14", ops=["normal_"], layouts=["transposed"])
    python -m course audit --device cpu --json
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass

import ipywidgets as widgets
import torch

from course import emps
from course.audit.args import (
    CONTROL_LAYOUT,
    LAYOUTS,
    AuditOp,
    Call,
    build_call,
    discover,
    find_ops,
    logical_shape,
    make_output,
    reference,
    require_layouts,
)
from course.audit.judge import COLOURS, VERDICTS, AuditResult, judge
from course.audit.report import flagged_ops, summary, summary_line, table_rows, text_table
from course.devices import mps_available
from course.errors import CourseError
from course.ui import Drawing, Panel, html_table

__all__ = [
    "CONTROL_LAYOUT",
    "LAYOUTS",
    "AuditResult",
    "audit",
    "audit_panel",
    "cli",
    "discover",
    "flagged_ops",
    "judge",
    "summary",
]


@dataclass(frozen=True)
class Target:
    """Where an audit runs: a torch device string and the emulated backend to use, if any."""

    label: str
    device: str
    backend: emps.Backend | None = None
    unavailable: str = ""  # why the device cannot be used here ("" if it can)
    no_float64: bool = False
    rtol: float = 1e-4  # the CPU and the emulation run the CPU's kernels; real GPUs get 1e-3


def target(device: str, backend: emps.Backend | None = None) -> Target:
    """Parse "cpu", "cuda", "mps", "emulated" or "emulated:PROFILE" (or use an emulated backend)."""
    if backend is not None:
        return Target(
            f"emulated ({backend.profile.name}, {backend.design})",
            emps.DEVICE,
            backend,
            no_float64=True,
        )
    if device == "emulated" or device.startswith("emulated:"):
        name = device.partition(":")[2] or emps.DEFAULT_PROFILE
        chosen = emps.Backend(emps.get_profile(name))
        return Target(f"emulated:{name}", emps.DEVICE, chosen, no_float64=True)
    if device == "cpu":
        return Target("cpu", "cpu")
    if device == "cuda":
        missing = "" if torch.cuda.is_available() else "CUDA is not available on this machine"
        return Target("cuda", "cuda", unavailable=missing, rtol=1e-3)
    if device == "mps":
        missing = "" if mps_available() else "MPS is not available on this machine"
        return Target("mps", "mps", unavailable=missing, no_float64=True, rtol=1e-3)
    raise CourseError(
        f"unknown device {device!r}; use cpu, cuda, mps, emulated or "
        f"emulated:PROFILE with PROFILE one of: {', '.join(emps.PROFILES)}"
    )


def audit(
    device: str = "cpu",
    ops: str | list[str] | None = None,
    layouts: str | list[str] | None = None,
    *,
    backend: emps.Backend | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> list[AuditResult]:
    """Audit in-place ops on non-contiguous outputs; one AuditResult per (op, layout)."""
    where = target(device, backend)
    chosen, shapes = find_ops(ops), require_layouts(layouts)
    results = []
    for index, op in enumerate(chosen):
        if progress is not None:
            progress(index + 1, len(chosen), op.name)
        results += [_audit_one(op, layout, where) for layout in shapes]
    return results


def _audit_one(op: AuditOp, layout: str, where: Target) -> AuditResult:
    def result(verdict: str, detail: str, dtype: str = "") -> AuditResult:
        return AuditResult(op.name, layout, verdict, detail, op.kind, dtype)

    if where.unavailable:
        return result("skipped", where.unavailable)
    call = build_call(op, logical_shape(layout))
    if isinstance(call, str):
        return result("skipped", call)
    dtype = str(call.dtype).replace("torch.", "")
    if where.no_float64 and call.dtype == torch.float64:
        why = f"needs float64 (no float32 form), which {where.label} lacks"
        return result("skipped", why, dtype)
    try:
        after = _run_on(op, call, layout, where)
    except CourseError as exc:  # the emulator's own limits, not a kernel bug
        return result("skipped", f"the emulated device cannot run it: {exc}", dtype)
    except Exception as exc:  # the kernel under audit raised: that is the finding
        return result("error", f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}", dtype)
    expected = reference(op, call)
    random = op.kind == "random"
    verdict, detail = judge(call.self_values, after, expected, random=random, rtol=where.rtol)
    return result(verdict, detail, dtype)


def _run_on(op: AuditOp, call: Call, layout: str, where: Target) -> torch.Tensor:
    """Run the op on the target device with a non-contiguous output; return the output on CPU."""
    context = (
        emps.use_backend(where.backend) if where.backend is not None else contextlib.nullcontext()
    )
    with context:
        out = make_output(layout, call.self_values, where.device)
        args, kwargs = call.on(where.device)
        torch.manual_seed(0)
        op.overload(out, *args, **kwargs)
        return out.cpu()


def cli(argv: list[str]) -> int:
    """`python -m course audit --device ... [--json] [--layout ...] [--op ...] [--all]`."""
    parser = argparse.ArgumentParser(prog="python -m course audit", description=cli.__doc__)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, mps, emulated[:PROFILE]")
    parser.add_argument(
        "--layout",
        action="append",
        choices=(*LAYOUTS, CONTROL_LAYOUT),
        help="audit only this layout (repeatable; default: all four)",
    )
    parser.add_argument("--op", action="append", help="audit only this op (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--all", action="store_true", help="list ok results too")
    options = parser.parse_args(argv)

    def progress(done: int, total: int, name: str) -> None:
        print(f"\r[{done}/{total}] {name:<40}", end="" if done < total else "\n", file=sys.stderr)

    try:
        missing = target(options.device).unavailable
        results = (
            [] if missing else audit(options.device, options.op, options.layout, progress=progress)
        )
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if missing:  # one clear line, not a table of identical skips
        print(f"{options.device}: skipped, {missing}")
        return 0
    if options.json:
        print(
            json.dumps(
                {
                    "device": options.device,
                    "summary": summary(results),
                    "results": [asdict(r) for r in results],
                },
                indent=2,
            )
        )
        return 0
    print(text_table(results, only_findings=not options.all))
    print(summary_line(options.device, summary(results)))
    return 0


@functools.lru_cache(maxsize=32)
def _cached_audit(device: str, layout: str) -> tuple[AuditResult, ...]:
    return tuple(audit(device, layouts=None if layout == "all" else [layout]))


def audit_panel(profile: str = emps.DEFAULT_PROFILE, layout: str = "transposed") -> Panel:
    """A widget: pick an emulated profile (or the CPU) and a layout; see which ops lose writes."""
    devices = [f"emulated:{name}" for name in emps.PROFILES] + ["cpu"]
    controls = {
        "device": widgets.Dropdown(options=devices, value=f"emulated:{profile}", description="on"),
        "layout": widgets.Dropdown(
            options=[*LAYOUTS, CONTROL_LAYOUT, "all"], value=layout, description="layout"
        ),
        "show_ok": widgets.Checkbox(value=False, description="show ok rows"),
    }
    return Panel(controls, draw_audit, title="Layout auditor")


def draw_audit(device: str, layout: str, show_ok: bool = False) -> Drawing:
    """The auditor's results as a colour table, findings first, with a summary line."""
    if layout not in (*LAYOUTS, CONTROL_LAYOUT, "all"):
        raise CourseError(f"unknown layout {layout!r}; choose from: {', '.join(LAYOUTS)}, all")
    results = list(_cached_audit(device, layout))
    results.sort(key=lambda r: (VERDICTS.index(r.verdict) == 0, r.op))
    rows = table_rows(results, only_findings=not show_ok)
    line = summary_line(device, summary(results))
    return Drawing(html=f"<p>{line}</p>" + html_table(rows, COLOURS))
