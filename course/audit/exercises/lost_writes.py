"""Notebook 08's lost writes found by auditing: a set that must follow the backend.

`08.lost_writes` runs the learner's function on hidden emulated backends no cell printed, so a
set written down or read from the profile, an audit of contiguous outputs only, or the
auditor's own filters are told so.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import types

from course import emps
from course.audit.core import audit
from course.audit.judge import BUGS, AuditResult
from course.audit.report import flagged_ops, summary
from course.emps.mps_kernels import KernelCall, gather_compute_scatter
from course.exercises import Exercise, Verdict, failed, passed, ready_made, register


def _half_copied_back(call: KernelCall) -> None:
    """A kernel that copies only the first half of a strided output back: wrong values, not none."""
    if call.output.is_contiguous():
        gather_compute_scatter(call)
        return
    result = call.output.contiguous()
    call.run_graph(call.placeholder(result), [call.placeholder(t) for t in call.inputs])
    rows = call.output.shape[0] // 2
    call.output[:rows].copy_(result[:rows])


def _refuses_strided(call: KernelCall) -> None:
    """A kernel that raises on a strided output: an error the user sees, not a lost write."""
    if not call.output.is_contiguous():
        raise RuntimeError(f"{call.op}: strided outputs are not supported")
    gather_compute_scatter(call)


def _numbers_dropped(call: KernelCall) -> None:
    """A kernel that drops its number arguments (alpha=, a scalar operand) on every layout, the
    contiguous control included: wrong everywhere, not only on strided outputs."""
    result = call.output.contiguous()  # out itself when contiguous: the copy-back is right
    call.graph(result, [call.placeholder(t).buffer for t in call.inputs], scalar=lambda x: 1)
    if result is not call.output:
        call.output.copy_(result)


def _backends() -> dict[str, tuple[emps.Backend, str]]:
    """label -> (hidden backend, what is true of it): backends no cell of the notebook printed."""
    return {
        "an unseen profile (every kernel fixed but two)": (
            emps.Backend(emps.FIXED_MACOS14.with_broken({"addcdiv", "bernoulli"})),
            "no notebook printed this profile: only running the auditor on it can tell",
        ),
        "macOS 15 with a 'broken' addcmul kernel": (
            emps.Backend(emps.MACOS15.with_broken({"addcmul"})),
            "macOS 15 hands kernels strided buffers, so a broken family loses nothing here: "
            "the audit decides, not the profile's list",
        ),
        "a backend whose lerp_ kernel copies back only half its output": (
            emps.Backend(emps.FIXED_MACOS14, overrides={"lerp": _half_copied_back}),
            "half of lerp_'s output keeps its old values: wrong values are a lost write too "
            "(verdict 'wrong-values', not only 'silent-no-write')",
        ),
        "a backend whose mul_ kernel raises on strided outputs": (
            emps.Backend(emps.FIXED_MACOS14, overrides={"mul": _refuses_strided}),
            "mul_ raises there (verdict 'error'): the user sees an exception, nothing is lost "
            "silently",
        ),
        "the 2.4 profile": (
            emps.Backend(emps.TORCH_2_4),
            "the emulated torch 2.4 profile",
        ),
        "a backend whose sub_ kernel drops its number arguments on every layout": (
            emps.Backend(emps.FIXED_MACOS14, overrides={"sub": _numbers_dropped}),
            "sub_ is wrong on every layout, the contiguous one too: an op wrong on the output "
            "you audited is a lost or wrong write, whatever the contiguous control says",
        ),
    }


@functools.cache
def _audited(label: str | None) -> tuple[AuditResult, ...]:
    """The auditor's results on a hidden backend (None: the default profile, 2.2.1)."""
    given = {"backend": _backends()[label][0]} if label else {}
    return tuple(audit("emulated", layouts="transposed", dtypes="float32", **given))


@functools.cache
def _lost_on(label: str | None) -> frozenset[str]:
    return frozenset(r.op.split(".")[0] for r in _audited(label) if r.verdict in BUGS)


def _lost_writes_problem(label: str, yours: set, log: emps.Recorder, audited: bool) -> str:
    """Why a set differs from what the auditor finds on one backend, naming the likely cause
    (`audited`: whether the learner's function called audit at all)."""
    _, why = _backends()[label]
    if not log.events and audited:
        return (
            "your function audited, but nothing ran on the emulated device: audit the backend "
            "you are given, audit('emulated', ..., backend=backend), in a dtype that device "
            "runs (float32; like MPS it has no float64, so every float64 call is refused)"
        )
    if not log.events:
        return (
            "nothing ran on the emulated device, so your set cannot follow the backend (a set "
            "written down, or read from the profile, is the same on every backend): audit the "
            "backend you are given, audit('emulated', ..., backend=backend)"
        )
    if all(event.contiguous for event in log.events):
        return (
            "every output your audit wrote was contiguous, and a lost write only shows on a "
            "non-contiguous one: use a layout such as 'transposed'"
        )
    if yours == _lost_on(None) != _lost_on(label):
        return (
            "that is what the default profile (2.2.1) loses: pass backend=backend to audit, "
            "or it audits its default"
        )
    ran = {event.op.split(".")[0] for event in log.events}
    unrun = sorted(_lost_on(label) - yours - ran)
    if unrun:
        return (
            f"your audit never ran {', '.join(unrun[:3])}, which loses its writes here: audit "
            "every op (no ops= list), in a dtype every op supports (float32)"
        )
    verdicts = {r.op.split(".")[0]: r.verdict for r in _audited(label)}
    extra = sorted(yours - _lost_on(label))
    if extra:
        named = ", ".join(f"{op} ({verdicts.get(op, 'not audited')})" for op in extra[:3])
        return (
            f"not lost here: {named}; only 'silent-no-write' and 'wrong-values' are lost "
            f"writes ({why})"
        )
    missing = len(_lost_on(label) - yours)
    return f"{why}. {missing} op(s) that lose writes here are missing from your set"


# The report's helpers that already pick the lost writes out of the results
_VERDICT_FILTERS = {
    "summary(...)['flagged']": summary,
    "flagged_ops": flagged_ops,
    "result.flagged": AuditResult.flagged.fget,
}


def _check_lost_writes(fn) -> Verdict:
    if not callable(fn):
        return failed("pass your function lost_writes(backend), not its result", repr(fn))
    if _reads_bugs(fn):
        return failed(
            "your function reads the auditor's own BUGS (course.audit.judge.BUGS): which "
            "verdicts are lost writes is what this exercise asks. Decide it yourself from each "
            "result's r.verdict"
        )
    for label, (backend, _) in _backends().items():
        with emps.record() as log, ready_made({**_VERDICT_FILTERS, "audit": audit}) as called:
            answer = fn(backend)
        borrowed = [name for name in called if name in _VERDICT_FILTERS]
        if borrowed:
            return failed(
                f"on {label} your function used the auditor's own filter ({borrowed[0]}): "
                "which verdicts are lost writes is what this exercise asks. Decide it yourself "
                "from each result's r.verdict"
            )
        if isinstance(answer, str) or not isinstance(answer, (set, frozenset, list, tuple)):
            return failed(
                f"on {label} lost_writes returned {type(answer).__name__} {answer!r}: return "
                "a set of op names such as {'aten::mul_'}"
            )
        if not all(isinstance(a, str) for a in answer):
            odd = next(a for a in answer if not isinstance(a, str))
            return failed(
                f"on {label} lost_writes returned {type(odd).__name__} objects, not names: return "
                "op names, strings such as 'aten::mul_' (a result's name is its .op)"
            )
        yours = {a if a.startswith("aten::") else f"aten::{a}" for a in answer}
        overloads = sorted(a for a in yours if "." in a)
        if overloads:
            return failed(
                f"on {label} your set has overload names ({overloads[0]}): drop what follows "
                "the '.', so add_.Tensor and add_.Scalar count as one op, aten::add_"
            )
        if yours != _lost_on(label):
            problem = _lost_writes_problem(label, yours, log, "audit" in called)
            return failed(f"on {label}: {problem}")
    return passed(
        f"right on {len(_backends())} hidden backends, including ones no cell printed: you can "
        "audit any backend"
    )


def _reads_bugs(fn) -> bool:
    """Whether the learner's function names the auditor's BUGS tuple: imported (`BUGS`), read
    from the module (`judge.BUGS`), or held in a closure. A tuple of their own is not it."""
    fn = inspect.unwrap(fn)  # check() hands the checker a wrapper of the learner's function
    code, names = getattr(fn, "__code__", None), set()
    codes = [code] if code is not None else []
    while codes:
        code = codes.pop()
        names |= set(code.co_names)
        codes += [const for const in code.co_consts if isinstance(const, types.CodeType)]
    scope = getattr(fn, "__globals__", {})
    cells = []
    for cell in getattr(fn, "__closure__", None) or ():
        with contextlib.suppress(ValueError):  # a cell not filled yet
            cells.append(cell.cell_contents)
    if any(value is BUGS for value in [*(scope.get(name) for name in names), *cells]):
        return True
    modules = [value for value in scope.values() if isinstance(value, types.ModuleType)]
    return "BUGS" in names and any(getattr(m, "BUGS", None) is BUGS for m in modules)


register(
    Exercise(
        "08.lost_writes",
        "Write lost_writes(backend) -> the set of ops (names like 'aten::normal_', overload "
        "dropped) whose writes the auditor finds lost or wrong on that emulated backend. A "
        "transposed output in float32 is enough.",
        _check_lost_writes,
        "audit runs every op on the emulated device; narrow it with its layouts, dtypes and "
        "backend arguments to the case the prompt names. Keep the results whose verdict is a "
        "bug, and drop the overload after the '.'.",
        minutes=8,
    )
)
