"""Notebook 08's exercises, checked by running the learner's answer on hidden cases.

Each checker stops at the first hidden case the answer gets wrong and says what is true of
that case, so the feedback names the shortcut (a NaN compared with ==, a tolerance that hides
a 3% error, a set that does not follow the backend) without printing the answer.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import types
from dataclasses import dataclass

import torch

from course import emps
from course.audit import judge
from course.audit.core import LAYOUTS, audit
from course.audit.judge import BUGS, AuditResult, ks_distance
from course.audit.report import flagged_ops, summary
from course.emps.mps_kernels import KernelCall, gather_compute_scatter
from course.emps.profiles import RANDOM_FAMILIES
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    is_scaffold,
    passed,
    ready_made,
    register,
)
from course.exercises import register_prediction as register_choice

# --- 08.verdict ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class VerdictCase:
    """One hidden output to judge, the right verdict, and what is true of it (the feedback)."""

    before: torch.Tensor
    after: torch.Tensor
    expected: torch.Tensor
    want: str
    why: str | dict[str, str]  # what is true of it, or per wrong verdict when that differs

    def feedback(self, got: str) -> str:
        """What is true of this output, told to a judge that said `got`."""
        return self.why if isinstance(self.why, str) else self.why[got]


def _verdict_cases() -> dict[str, VerdictCase]:
    """label -> case: outputs a deterministic op left behind, each a trap for one shortcut."""
    values = torch.arange(1.0, 13.0).reshape(3, 4).T  # non-contiguous, non-zero, all distinct
    doubled = values * 2
    poison = torch.full((4, 3), float("nan"))
    sample = torch.linspace(0.1, 0.9, 12).reshape(4, 3)
    ramp = torch.linspace(-2.0, 2.0, 12).reshape(4, 3)
    clamped = ramp.clamp(-1, 1)  # the middle elements legitimately stay as they were
    logs = ramp.log()  # NaN for the negative inputs: the right answer contains NaN
    all_but_last = doubled.clone()
    all_but_last[-1, -1] = values[-1, -1]
    ints = torch.arange(1, 13).reshape(3, 4).T
    tiny = values * 1e-4  # Adam's exp_avg_sq is this small: an absolute tolerance sees nothing
    one_written = values.clone()
    one_written[0, 0] = doubled[0, 0]
    specks = values * 1e-7  # smaller still: an exp_avg_sq early in training
    kept = "every element still holds exactly what it held before: nothing was written"
    return {
        "an output the op never wrote": VerdictCase(
            values,
            values.clone(),
            doubled,
            "silent-no-write",
            f"{kept} (non-zero values: an unwritten output keeps what it held, it does not "
            "turn to zeros)",
        ),
        "an output overwritten with zeros": VerdictCase(
            values,
            torch.zeros_like(values),
            doubled,
            "wrong-values",
            "zeros were written over non-zero values: a write happened, a wrong one",
        ),
        "a correctly written output": VerdictCase(
            values, doubled.clone(), doubled, "ok", "it matches the expected values"
        ),
        "an output written only where its values exceed 6": VerdictCase(
            values,
            torch.where(values > 6, doubled, values),
            doubled,
            "wrong-values",
            "some elements changed and some kept their old values: silent-no-write means "
            "*every* element kept its value",
        ),
        "a NaN-poisoned output the op never wrote": VerdictCase(
            poison,
            poison.clone(),
            sample,
            "silent-no-write",
            f"{kept}; NaN == NaN is False, so an unwritten NaN looks changed to ==",
        ),
        "a NaN-poisoned output written correctly": VerdictCase(
            poison, sample.clone(), sample, "ok", "it matches the expected values"
        ),
        "clamp_ written correctly (in-range elements stay put)": VerdictCase(
            ramp,
            clamped.clone(),
            clamped,
            "ok",
            "it matches the expected values; that some elements kept their values is right here",
        ),
        "clamp_ never written": VerdictCase(ramp, ramp.clone(), clamped, "silent-no-write", kept),
        "log_ written correctly (NaN for negative inputs)": VerdictCase(
            ramp,
            logs.clone(),
            logs,
            "ok",
            "the right answer itself has NaN here, so the comparison with expected must count "
            "NaN as equal to NaN",
        ),
        "an output 3% off everywhere": VerdictCase(
            values,
            doubled * 1.03,
            doubled,
            "wrong-values",
            "every element is 3% off: a tolerance that lets that pass hides a wrong kernel "
            "(allclose's default rtol is 1e-5)",
        ),
        "the right values in the wrong places (a scramble)": VerdictCase(
            values,
            doubled.flatten().flip(0).reshape(4, 3),
            doubled,
            "wrong-values",
            "the same values in other places: sorted values, sums and means cannot see a "
            "scramble, compare element by element",
        ),
        "an output written except its last element": VerdictCase(
            values,
            all_but_last,
            doubled,
            "wrong-values",
            "only the last element kept its old value: comparing one element or the first "
            "rows misses it, compare every element",
        ),
        "an output overwritten with NaN garbage": VerdictCase(
            values,
            torch.full_like(values, float("nan")),
            doubled,
            "wrong-values",
            "NaN was written over numbers: that is a write, not an unchanged output (only a "
            "NaN that *was* NaN before is unchanged)",
        ),
        "a correct output one rounding step from the float64 reference": VerdictCase(
            values,
            torch.nextafter(doubled, torch.tensor(float("inf"))),
            doubled,
            "ok",
            "expected comes from another kernel, so a correct output may differ in its last "
            "bit: compare with allclose, not exact equality",
        ),
        "an integer output the op never wrote": VerdictCase(
            ints, ints.clone(), ints * 2, "silent-no-write", f"{kept} (an int64 output)"
        ),
        "a NaN-poisoned output never written, whose right answer is all zeros": VerdictCase(
            poison,
            poison.clone(),
            torch.zeros_like(poison),
            "silent-no-write",
            f"{kept}: the NaN poison is still there. Turning NaN into 0 before comparing "
            "(nan_to_num) makes the poison look like the right answer wherever that is 0",
        ),
        "zeros (a fresh exp_avg_sq) overwritten with NaN garbage": VerdictCase(
            torch.zeros_like(values),
            torch.full_like(values, float("nan")),
            doubled,
            "wrong-values",
            "NaN was written over zeros: a write, not an unchanged output. Turning NaN into 0 "
            "before comparing (nan_to_num) makes it look unchanged",
        ),
        "an output of tiny values (about 1e-4), each 40% off": VerdictCase(
            tiny,
            tiny * 2 * 0.6,
            tiny * 2,
            "wrong-values",
            "every element is 40% off, but the values are about 1e-4: an absolute tolerance "
            "such as atol=1e-3 calls any two of them equal (allclose's default atol is 1e-8)",
        ),
        "an output 0.2% off everywhere": VerdictCase(
            values,
            doubled * 1.002,
            doubled,
            "wrong-values",
            "every element is 0.2% off: a correct float32 kernel differs from expected by "
            "rounding, about 1e-7 relative, so a tolerance that lets 0.2% pass hides a wrong "
            "kernel (allclose's default rtol is 1e-5)",
        ),
        "an output one rounding step from its old values": VerdictCase(
            values,
            torch.nextafter(values, torch.tensor(float("inf"))),
            doubled,
            "wrong-values",
            "every element differs from its old value in the last bit: something was written "
            "(a tiny wrong update), so it is not silent-no-write. 'Unchanged' means exactly "
            "unchanged: compare with before bit for bit, no tolerance",
        ),
        "an output holding its old values in other places": VerdictCase(
            values,
            values.flatten().flip(0).reshape(4, 3),
            doubled,
            "wrong-values",
            "the old values, moved to other places: a write happened. Sums, means and sorted "
            "values of before cannot see that, compare element by element",
        ),
        "an output where a single element was written": VerdictCase(
            values,
            one_written,
            doubled,
            "wrong-values",
            "one element changed: 'almost every element kept its value' is not 'nothing was "
            "written'; silent-no-write means not one element changed",
        ),
        "an output holding some NaN from an earlier log_, never written": VerdictCase(
            logs,
            logs.clone(),
            logs * 2,
            "silent-no-write",
            f"{kept}, its NaN included: NaN == NaN is False for a NaN in some elements too, not "
            "only for a poison that fills the output, so compare NaN-aware element by element",
        ),
        "log_ that wrote 0.0 where the right answer is NaN": VerdictCase(
            ramp,
            logs.nan_to_num(0.0),
            logs,
            "wrong-values",
            "where the right answer is NaN this output holds 0.0: a comparison that skips the "
            "elements where expected is NaN cannot see that; NaN must meet NaN (equal_nan=True)",
        ),
        "an output 0.05% off everywhere": VerdictCase(
            values,
            doubled * 1.0005,
            doubled,
            "wrong-values",
            "every element is 0.05% off: rounding makes a correct float32 kernel differ by about "
            "1e-7 relative, so a tolerance such as rtol=1e-3 lets a wrong kernel pass "
            "(allclose's default rtol is 1e-5)",
        ),
        "an output of values about 1e-7, each 40% off": VerdictCase(
            specks,
            specks * 2 * 0.6,
            specks * 2,
            "wrong-values",
            "every element is 40% off, but the values are about 1e-7 (an early exp_avg_sq): an "
            "absolute tolerance larger than the values, such as atol=1e-5 or a max difference "
            "under 1e-4, calls any two of them equal (allclose's default atol is 1e-8)",
        ),
    }


# The auditor's own judging, which these exercises ask the learner to write
_COURSE_JUDGES = {
    "course.audit.judge.judge": judge.judge,
    "course.audit.judge.unchanged": judge.unchanged,
    "course.audit.judge.close": judge.close,
}


def _judged(fn, cases: dict[str, VerdictCase], done: str) -> Verdict:
    """Run a learner's judge on every hidden output; stop at the first wrong verdict."""
    for label, case in cases.items():
        with ready_made(_COURSE_JUDGES) as borrowed:
            try:
                got = fn(case.before.clone(), case.after.clone(), case.expected.clone())
            except Exception as exc:
                if is_scaffold(exc):
                    raise
                return failed(f"for {label} your function raised {type(exc).__name__}: {exc}")
        if borrowed:
            return failed(
                f"for {label} your function called the auditor's own {borrowed[0]}: telling "
                "'nothing written' from 'written wrong' is what this exercise asks. Write the "
                "comparisons yourself, NaN-aware"
            )
        if got not in ("ok", "silent-no-write", "wrong-values"):
            return failed(
                f"for {label} your function returned {got!r}: return 'ok', 'silent-no-write' "
                "or 'wrong-values'"
            )
        if got != case.want:
            return failed(
                f"for {label} your judge says {got!r}: {case.feedback(got)}", got, case.want
            )
    return passed(f"right on {len(cases)} hidden outputs: {done}")


def _check_verdict(fn) -> Verdict:
    return _judged(
        fn,
        _verdict_cases(),
        "nothing written vs wrong values, NaN poison and rounding",
    )


def _reference_verdict():
    def verdict(before, after, expected):
        if torch.allclose(after, expected, equal_nan=True):
            return "ok"
        unchanged = (after == before) | (after.isnan() & before.isnan())
        if unchanged.all():
            return "silent-no-write"
        return "wrong-values"

    return verdict


def _judge_with(same: str = "allclose", kept: str = "nan-aware"):
    """The reference with one shortcut: how `after` is matched with `expected`, or with `before`."""
    matches = {
        "allclose": lambda a, e: torch.allclose(a, e, equal_nan=True),
        "no NaN": lambda a, e: torch.allclose(a, e),
        "5%": lambda a, e: torch.allclose(a, e, rtol=0.05, equal_nan=True),
        "sorted": lambda a, e: torch.allclose(
            a.flatten().sort().values, e.flatten().sort().values, equal_nan=True
        ),
        "first row": lambda a, e: torch.allclose(a[0], e[0], equal_nan=True),
        "exact": lambda a, e: torch.equal(a.nan_to_num(0.5), e.nan_to_num(0.5)),
        "NaN as 0": lambda a, e: torch.allclose(a.nan_to_num(), e.nan_to_num()),
        "atol 1e-3": lambda a, e: torch.allclose(a, e, atol=1e-3, equal_nan=True),
        "1%": lambda a, e: torch.allclose(a, e, rtol=0.01, equal_nan=True),
        "0.1%": lambda a, e: torch.allclose(a, e, rtol=1e-3, equal_nan=True),
        "max diff 1e-4": lambda a, e: (
            torch.equal(a.isnan(), e.isnan()) and bool((a - e).abs().nan_to_num().max() < 1e-4)
        ),
        "where expected is a number": lambda a, e: torch.allclose(a[~e.isnan()], e[~e.isnan()]),
    }
    unchanged = {
        "nan-aware": lambda a, b: ((a == b) | (a.isnan() & b.isnan())).all(),
        "==": lambda a, b: (a == b).all(),
        "any": lambda a, b: ((a == b) | (a.isnan() & b.isnan())).any(),
        "NaN counts as old": lambda a, b: ((a == b) | a.isnan()).all(),
        "zeros": lambda a, b: not a.any(),
        "NaN as 0": lambda a, b: torch.equal(a.nan_to_num(), b.nan_to_num()),
        "allclose": lambda a, b: torch.allclose(a, b, equal_nan=True),
        "same sum": lambda a, b: (
            bool(a.nansum() == b.nansum()) and torch.equal(a.isnan(), b.isnan())
        ),
        "90%": lambda a, b: ((a == b) | (a.isnan() & b.isnan())).double().mean() > 0.9,
        "a poison fills it": lambda a, b: (
            bool(a.isnan().all()) if bool(b.isnan().all()) else torch.equal(a, b)
        ),
    }

    def verdict(before, after, expected):
        if matches[same](after, expected):
            return "ok"
        return "silent-no-write" if unchanged[kept](after, before) else "wrong-values"

    return verdict


def _the_auditors_judge():
    def verdict(before, after, expected):  # the course's own judge, wrapped
        return judge.judge(before, after, expected)[0]

    return verdict


register(
    Exercise(
        "08.verdict",
        "Write verdict(before, after, expected) -> 'ok' | 'silent-no-write' | 'wrong-values' for "
        "one output of a deterministic op (before: what the output held before the call, maybe "
        "a NaN poison; expected: the right answer from another kernel, so a correct output may "
        "differ from it in the last bit).",
        _check_verdict,
        "Compare `after` with `expected` first (allclose, every element); only then ask whether "
        "*every* element still holds its old value. NaN == NaN is False, so both comparisons "
        "must treat NaN specially.",
        _reference_verdict,
        (
            lambda: _judge_with(kept="zeros"),
            lambda: (
                lambda before, after, expected: (
                    "ok" if torch.equal(after, expected) else "silent-no-write"
                )
            ),
            lambda: _judge_with(kept="=="),
            lambda: _judge_with(kept="any"),
            lambda: _judge_with(same="no NaN"),
            lambda: _judge_with(same="5%"),
            lambda: _judge_with(same="sorted"),
            lambda: _judge_with(same="first row"),
            lambda: _judge_with(kept="NaN counts as old"),
            lambda: _judge_with(same="exact"),
            lambda: _judge_with(same="NaN as 0"),
            lambda: _judge_with(kept="NaN as 0"),
            lambda: _judge_with(same="atol 1e-3"),
            lambda: _judge_with(same="1%"),
            lambda: _judge_with(kept="allclose"),
            lambda: _judge_with(kept="same sum"),
            lambda: _judge_with(kept="90%"),
            lambda: _judge_with(kept="a poison fills it"),
            lambda: _judge_with(same="where expected is a number"),
            lambda: _judge_with(same="0.1%"),
            lambda: _judge_with(same="max diff 1e-4"),
            _the_auditors_judge,
        ),
    )
)


# --- 08.lost_writes ------------------------------------------------------------------------------


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
def _audited(label: str) -> tuple[AuditResult, ...]:
    backend, _ = _backends()[label]
    return tuple(audit("emulated", layouts="transposed", dtypes="float32", backend=backend))


@functools.cache
def _lost_on(label: str) -> frozenset[str]:
    return frozenset(r.op.split(".")[0] for r in _audited(label) if r.verdict in BUGS)


@functools.cache
def _lost_on_default() -> frozenset[str]:
    results = audit("emulated", layouts="transposed", dtypes="float32")
    return frozenset(r.op.split(".")[0] for r in results if r.verdict in BUGS)


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
    if yours == _lost_on_default() != _lost_on(label):
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


def _reference_lost_writes():
    def lost_writes(backend):
        results = audit("emulated", layouts="transposed", dtypes="float32", backend=backend)
        lost = [r for r in results if r.verdict in ("silent-no-write", "wrong-values")]
        return {r.op.split(".")[0] for r in lost}

    return lost_writes


STORY_OPS = ("addcmul_", "addcdiv_", *(f"{family}_" for family in RANDOM_FAMILIES))


def _lost_writes_with(
    layout: str = "transposed",
    bugs: tuple[str, ...] = ("silent-no-write", "wrong-values"),  # their own: not BUGS itself
    overloads: bool = False,
    device: str = "emulated",
    given: bool = True,
    dtype: str = "float32",
    ops: tuple[str, ...] | None = None,
    borrow: str = "",
    minus_control: bool = False,
):
    """The reference with one slip: the layout, dtype or ops audited, which verdicts count, the
    names, the backend, or the report's own filter (`borrow`) in place of the verdicts."""

    def lost_writes(backend):
        target = {"backend": backend} if given else {}
        chosen = {"ops": list(ops)} if ops else {}
        results = audit(device, layouts=layout, dtypes=dtype, **target, **chosen)
        if borrow == "summary":
            return set(summary(results)["flagged"])
        if borrow == "flagged":
            return {r.op.split(".")[0] for r in results if r.flagged}
        if minus_control:  # "a layout bug is what fails strided and not contiguous"
            control = audit(device, layouts="contiguous", dtypes=dtype, **target, **chosen)
            wrong = {r.op.split(".")[0] for r in control if r.verdict in bugs}
            return {r.op.split(".")[0] for r in results if r.verdict in bugs} - wrong
        return {r.op if overloads else r.op.split(".")[0] for r in results if r.verdict in bugs}

    return lost_writes


def _bugs_borrowed():
    def lost_writes(backend):  # the auditor's own answer to "which verdicts are lost writes"
        results = audit("emulated", layouts="transposed", dtypes="float32", backend=backend)
        return {r.op.split(".")[0] for r in results if r.verdict in BUGS}

    return lost_writes


def _from_the_profile():
    def lost_writes(backend):  # reads the profile's list instead of running anything
        return {f"aten::{family}_" for family in backend.profile.broken}

    return lost_writes


register(
    Exercise(
        "08.lost_writes",
        "Write lost_writes(backend) -> the set of ops (names like 'aten::normal_', overload "
        "dropped) whose writes the auditor finds lost or wrong on that emulated backend. A "
        "transposed output in float32 is enough.",
        _check_lost_writes,
        "audit('emulated', layouts='transposed', dtypes='float32', backend=backend) returns "
        "results; keep those whose verdict is a bug, and drop the overload after the '.'.",
        _reference_lost_writes,
        (
            lambda: lambda backend: {f"aten::{op}_" for op in RANDOM_FAMILIES},
            _from_the_profile,
            lambda: _lost_writes_with(bugs=("silent-no-write",)),
            lambda: _lost_writes_with(overloads=True),
            lambda: _lost_writes_with(bugs=(*BUGS, "error")),
            lambda: _lost_writes_with(bugs=(*BUGS, "error", "skipped")),
            lambda: _lost_writes_with(layout="contiguous"),
            lambda: _lost_writes_with(layout="storage-offset"),
            lambda: _lost_writes_with(given=False),
            lambda: _lost_writes_with(device="cpu", given=False),
            lambda: _lost_writes_with(dtype="int64"),
            lambda: _lost_writes_with(ops=STORY_OPS),
            lambda: _lost_writes_with(borrow="summary"),
            lambda: _lost_writes_with(borrow="flagged"),
            lambda: _lost_writes_with(layout="expanded"),
            lambda: _lost_writes_with(minus_control=True),
            lambda: _lost_writes_with(dtype="float64"),
            _bugs_borrowed,
        ),
    )
)


# --- 08.which_layouts (a prediction) -------------------------------------------------------------

NON_CONTIGUOUS_OUTPUTS = {
    "transposed",
    "step-sliced",
    "permuted",
    "channels-last",
    "out=transposed",
}
LAYOUT_CHOICES = (
    "only transposed",
    "every non-contiguous output",
    "every layout",
    "none",
    "some other mix",
)


def _which_layouts() -> str:
    results = audit(f"emulated:{emps.TORCH_2_2_1.name}", ops="addcmul_", dtypes="float32")
    flagged = {r.layout for r in results if r.flagged}
    named = {
        frozenset(): "none",
        frozenset({"transposed"}): "only transposed",
        frozenset(NON_CONTIGUOUS_OUTPUTS): "every non-contiguous output",
        frozenset(LAYOUTS): "every layout",
    }
    return named.get(frozenset(flagged), "some other mix")


register_choice(
    Prediction(
        "08.which_layouts",
        f"On the 2.2.1 profile, which of the audit's layouts ({', '.join(LAYOUTS)}) lose "
        "addcmul_'s result?",
        LAYOUT_CHOICES,
        _which_layouts,
        "The Placeholder copies any output that is not contiguous (transposed, step-sliced, "
        "permuted, channels_last, and a non-contiguous out= tensor), and the copy is dropped. "
        "A storage offset leaves the output contiguous, and expanded (stride-0) tensors are "
        "only ever inputs, which the Placeholder copies correctly: those layouts are fine.",
        answer_words=("any output that is not contiguous", "a storage offset is harmless"),
    )
)


# --- 08.random_verdict ---------------------------------------------------------------------------

RANDOM_SHAPE = (32, 48)  # 1536 samples: same-distribution draws give a KS distance near 0.03


def _draws(seed: int) -> dict[str, torch.Tensor]:
    """Correct draws of several random ops, contiguous and into a transposed output."""
    gen = torch.Generator().manual_seed(seed)
    rows, cols = RANDOM_SHAPE

    def both(fill) -> tuple[torch.Tensor, torch.Tensor]:
        return fill(torch.empty(RANDOM_SHAPE)), fill(torch.empty(cols, rows).T)

    normal, normal_t = both(lambda t: t.normal_(generator=gen))
    uniform, uniform_t = both(lambda t: t.uniform_(generator=gen))
    exponential, exponential_t = both(lambda t: t.exponential_(generator=gen))
    ints = torch.empty(RANDOM_SHAPE, dtype=torch.int64).random_(0, 10, generator=gen)
    ints_t = torch.empty(cols, rows, dtype=torch.int64).T.random_(0, 10, generator=gen)
    return {
        "normal": normal,
        "normal, transposed": normal_t,
        "uniform": uniform,
        "uniform, transposed": uniform_t,
        "exponential": exponential,
        "exponential, transposed": exponential_t,
        "int": ints,
        "int, transposed": ints_t,
    }


def _random_cases() -> dict[str, VerdictCase]:
    """label -> case for a random op: `expected` is a correct sample, never the same numbers."""
    draw = _draws(seed=5)
    poison = torch.full(RANDOM_SHAPE, float("nan"))
    int_poison = torch.full(RANDOM_SHAPE, torch.iinfo(torch.int64).min)
    normal, sample = draw["normal, transposed"], _draws(seed=6)["normal"]
    half = torch.where(
        torch.arange(RANDOM_SHAPE[0])[:, None] < RANDOM_SHAPE[0] // 2, normal, poison
    )
    one_left = normal.clone()
    one_left[-1, -1] = float("nan")
    int_one_left = draw["int, transposed"].clone()
    int_one_left[-1, -1] = int_poison[-1, -1]
    int32_poison = torch.full(RANDOM_SHAPE, torch.iinfo(torch.int32).min, dtype=torch.int32)
    first_row = torch.where(torch.arange(RANDOM_SHAPE[0])[:, None] == 0, normal, poison)
    coin = torch.where(normal < 0, -1.0, 1.0)  # mean 0 and spread 1, like the sample, yet ±1
    signed, signed_t = _signed_ints(seed=7)
    poisoned = "still holds the poison it held before the call"
    return {
        "a normal_ output never written (NaN poison)": VerdictCase(
            poison,
            poison.clone(),
            sample,
            "silent-no-write",
            f"every element {poisoned}; NaN == NaN is False, so an unwritten NaN looks changed "
            "to ==",
        ),
        "normal_ drawn correctly into a transposed output": VerdictCase(
            poison,
            normal,
            sample,
            "ok",
            "same distribution, other numbers: with one seed a strided output draws in another "
            "order than a contiguous one (pytorch#166856), so compare distributions (KS), not "
            "values, sorted or not",
        ),
        "uniform_ drawn correctly into a transposed output": VerdictCase(
            poison,
            draw["uniform, transposed"],
            draw["uniform"],
            "ok",
            "every element written, same distribution as `sample`: a uniform one, so a test "
            "against the normal law (mean 0 and standard deviation 1, or a normal draw of "
            "your own) is not the test: compare with sample",
        ),
        "exponential_ drawn correctly into a transposed output": VerdictCase(
            poison,
            draw["exponential, transposed"],
            draw["exponential"],
            "ok",
            "every element written, same distribution as the sample (an exponential one)",
        ),
        "an int64 random_ output never written": VerdictCase(
            int_poison,
            int_poison.clone(),
            draw["int"],
            "silent-no-write",
            f"every element {poisoned}: an integer output's poison is its smallest value, not "
            "NaN, so compare after with before",
        ),
        "random_(0, 10) drawn correctly into a transposed int64 output": VerdictCase(
            int_poison,
            draw["int, transposed"],
            draw["int"],
            "ok",
            "every element written, same distribution (whole numbers 0 to 9, with ties)",
        ),
        "a normal_ output written in its first half only": VerdictCase(
            poison,
            half,
            sample,
            "wrong-values",
            {
                "silent-no-write": "half the elements were written: 'silent-no-write' means "
                "none was",
                "ok": "half the elements still hold the poison: 'ok' needs every element "
                "written (the written half alone has the right distribution)",
            },
        ),
        "a normal_ output written except its last element": VerdictCase(
            poison,
            one_left,
            sample,
            "wrong-values",
            "one element still holds the poison: every element must be written",
        ),
        "a normal_ output filled with ones": VerdictCase(
            poison,
            torch.ones(RANDOM_SHAPE),
            sample,
            "wrong-values",
            "every element was written, all with 1.0: coverage alone is not enough, the values "
            "must follow the sample's distribution",
        ),
        "normal_ with its mean shifted by 0.8": VerdictCase(
            poison,
            normal + 0.8,
            sample,
            "wrong-values",
            "a shifted distribution (KS about 0.33): a threshold that lets this pass is too "
            "loose; same-distribution samples of this size stay under 0.06",
        ),
        "normal_ with the right mean and a third of the spread": VerdictCase(
            poison,
            normal * 0.3,
            sample,
            "wrong-values",
            "the mean matches, the spread does not (KS about 0.27, well above the prompt's "
            "0.1): compare the whole distribution, not its mean, and keep the threshold at 0.1",
        ),
        "an int32 random_ output never written": VerdictCase(
            int32_poison,
            int32_poison.clone(),
            draw["int"].to(torch.int32),
            "silent-no-write",
            f"every element {poisoned}: for int32 that is -2**31, not int64's smallest value, "
            "so compare after with before rather than with a number of your own",
        ),
        "an int64 random_ output written except its last element": VerdictCase(
            int_poison,
            int_one_left,
            draw["int"],
            "wrong-values",
            "one element still holds the poison, the smallest int64: an integer has no NaN, so "
            "look for unwritten elements by comparing after with before, not with isnan",
        ),
        "a normal_ output written in its first row only": VerdictCase(
            poison,
            first_row,
            sample,
            "wrong-values",
            {
                "silent-no-write": "one row was written and the rest still hold the poison: "
                "'silent-no-write' means not one element was written, however few were",
                "ok": "only one row was written: 'ok' needs every element written",
            },
        ),
        "a normal_ output of only -1 and 1 (the right mean and spread)": VerdictCase(
            poison,
            coin,
            sample,
            "wrong-values",
            "mean 0 and standard deviation 1, like the sample, but only two values (KS about "
            "0.34): a mean and a spread are not a distribution, compare the whole of it (KS)",
        ),
        "random_(0, 10) into an int64 output that drew only 0 to 4": VerdictCase(
            int_poison,
            draw["int, transposed"] // 2,
            draw["int"],
            "wrong-values",
            "every element written, but only whole numbers 0 to 4 where the sample has 0 to 9 "
            "(KS about 0.5): an integer output needs the distribution test too, ties and all",
        ),
        "random_(-5, 5) drawn correctly into a transposed int64 output": VerdictCase(
            int_poison,
            signed_t,
            signed,
            "ok",
            "every element written, same distribution, half of it negative: a negative draw is "
            "no poison, only what `before` held is (compare after with before)",
        ),
    }


def _signed_ints(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """random_(-5, 5) into a contiguous and into a transposed int64 output."""
    gen = torch.Generator().manual_seed(seed)
    rows, cols = RANDOM_SHAPE
    contiguous = torch.empty(RANDOM_SHAPE, dtype=torch.int64).random_(-5, 5, generator=gen)
    transposed = torch.empty(cols, rows, dtype=torch.int64).T.random_(-5, 5, generator=gen)
    return contiguous, transposed


def _check_random_verdict(fn) -> Verdict:
    return _judged(
        fn,
        _random_cases(),
        "every element written, then the distribution",
    )


def _reference_random_verdict():
    def random_verdict(before, after, sample):
        unwritten = (after == before) | (after.isnan() & before.isnan())
        if unwritten.all():
            return "silent-no-write"
        if unwritten.any():
            return "wrong-values"
        distance = ks_distance(after.flatten().double(), sample.flatten().double())
        return "ok" if distance < 0.1 else "wrong-values"

    return random_verdict


def _own() -> torch.Generator:
    """A learner's own generator, for a judge that draws its own sample."""
    return torch.Generator().manual_seed(0)


def _random_judge_with(compare: str = "ks 0.1", unwritten: str = "nan-aware", partial=True):
    """The reference with one shortcut: how values are compared, or how unwritten is seen."""
    kept = {
        "nan-aware": lambda a, b: (a == b) | (a.isnan() & b.isnan()),
        "==": lambda a, b: a == b,
        "isnan": lambda a, b: a.isnan(),
        "int64 minimum": lambda a, b: (
            a.isnan() if a.is_floating_point() else a == torch.iinfo(torch.int64).min
        ),
        "negative": lambda a, b: a.isnan() if a.is_floating_point() else a < 0,
        "the auditor's": lambda a, b: judge.unchanged(a, b),
    }

    def ks(a, s):
        return ks_distance(a.flatten().double(), s.flatten().double())

    same = {
        "ks 0.1": lambda a, s: ks(a, s) < 0.1,
        "ks 0.5": lambda a, s: ks(a, s) < 0.5,
        "equal": lambda a, s: torch.equal(a, s),
        "sorted": lambda a, s: torch.equal(a.flatten().sort().values, s.flatten().sort().values),
        "mean": lambda a, s: abs(a.double().mean() - s.double().mean()) < 0.1,
        "anything": lambda a, s: True,
        "standard normal": lambda a, s: (
            abs(a.double().mean()) < 0.1 and abs(a.double().std() - 1) < 0.1
        ),
        "mean and std": lambda a, s: (
            abs(a.double().mean() - s.double().mean()) < 0.1
            and abs(a.double().std() - s.double().std()) < 0.1
        ),
        "ks 0.3": lambda a, s: ks(a, s) < 0.3,
        "own normal draw": lambda a, s: ks(a, torch.randn(s.shape, generator=_own())) < 0.1,
        "floats only": lambda a, s: not a.is_floating_point() or ks(a, s) < 0.1,
    }

    def random_verdict(before, after, sample):
        left = kept[unwritten](after, before)
        if left.all():
            return "silent-no-write"
        if partial == "any" and left.any():
            return "silent-no-write"
        if partial == "majority" and left.double().mean() > 0.5:
            return "silent-no-write"
        if partial == "isnan" and after.isnan().any():
            return "wrong-values"
        if partial in (True, "majority") and left.any():
            return "wrong-values"
        values = after[~left] if left.any() else after
        return "ok" if same[compare](values, sample) else "wrong-values"

    return random_verdict


register(
    Exercise(
        "08.random_verdict",
        "Write random_verdict(before, after, sample) -> 'ok' | 'silent-no-write' | "
        "'wrong-values' for one output of a random op (before: the poison it held, NaN or the "
        "integer minimum; sample: a correct draw of the same op into a contiguous tensor). "
        "'ok' means every element written and the sample's distribution (KS distance < 0.1).",
        _check_random_verdict,
        "First count the elements that still hold the poison (NaN-aware, as in your judge): "
        "all of them, some, or none. Only a fully written output gets the distribution test: "
        "ks_distance(after.flatten().double(), sample.flatten().double()) < 0.1.",
        _reference_random_verdict,
        (
            lambda: _random_judge_with(compare="equal"),
            lambda: _random_judge_with(compare="sorted"),
            lambda: _random_judge_with(unwritten="=="),
            lambda: _random_judge_with(unwritten="isnan"),
            lambda: _random_judge_with(partial="any"),
            lambda: _random_judge_with(partial=False),
            lambda: _random_judge_with(compare="anything"),
            lambda: _random_judge_with(compare="mean"),
            lambda: _random_judge_with(compare="ks 0.5"),
            lambda: _random_judge_with(compare="standard normal"),
            lambda: _random_judge_with(unwritten="int64 minimum"),
            lambda: _random_judge_with(partial="isnan"),
            lambda: _random_judge_with(partial="majority"),
            lambda: _random_judge_with(compare="mean and std"),
            lambda: _random_judge_with(compare="ks 0.3"),
            lambda: _random_judge_with(compare="own normal draw"),
            lambda: _random_judge_with(compare="floats only"),
            lambda: _random_judge_with(unwritten="negative"),
            lambda: _random_judge_with(unwritten="the auditor's"),
        ),
    )
)
