"""What notebook 04's rule checkers share: catching a borrowed answer, and naming a wrong rule's
cause from the pattern of its mismatches.

A rule the learner writes (an address, torch's contiguity rule, the layout after a view) can be
"answered" without being written: build a tensor with those strides and ask torch, or call the
course's own calculator, which holds every rule. Such an answer agrees with torch everywhere and
teaches nothing, so each checker runs the learner's function watched (`watched`): every call it
makes to torch, to numpy or into the course's own code is recorded and named in the feedback.
(The engine's `ready_made` watch names given functions; this one names whole libraries.)

A `Rule` is the engine's `Checking` with layouts as the cases and torch as the truth (`judge`).
When a rule disagrees with torch, the pattern of the disagreements says more than the smallest
case alone: only layouts of 4 dims or more (a rule for three named dims), an answer that never
changes when one parameter does (ignored, or hard-coded from an example), then what each rule's
own module knows about its classic mistakes (`Rule.causes`). `judge` asks in that order.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from torch.overrides import TorchFunctionMode

import course
from course.exercises import Verdict, failed, not_attempted
from course.exercises.engine import Checking, Trial
from course.layout.oracle import Case, Mismatch, Raised, as_ints, size_key

COURSE_DIR = str(Path(course.__file__).resolve().parent)
# the checkers themselves run inside the watch (the shared exercise layer, this package)
CHECKERS = (str(Path(__file__).resolve().parent), str(Path(COURSE_DIR) / "exercises"))


@dataclass
class Borrowed:
    """What a learner's function called that answers for it: torch, numpy, the course's code."""

    torch: list[str] = field(default_factory=list)
    numpy: list[str] = field(default_factory=list)
    course: list[str] = field(default_factory=list)

    def verdict(self, title: str) -> Verdict | None:
        """The feedback for a borrowed answer (the course's helper first: it is the answer
        key), or None when the function computed everything itself."""
        if self.course:
            return failed(
                f"{title} called the course's own {_listed(self.course)}. The course's "
                "calculator holds every layout rule, so that answers with its rule, not yours "
                "(and the notebook's own tools sit on top of it). Write the rule itself, with "
                "arithmetic on the tuples."
            )
        for library, calls in (("torch", self.torch), ("numpy", self.numpy)):
            if calls:
                return failed(
                    f"{title} asked {library} ({_listed(calls)}). The checker compares your "
                    "rule with torch's, so a rule that hands the work to a library is not shown "
                    f"to be yours: an array built with these strides answers with {library}'s "
                    "own rule, and even arithmetic done in it hides what you wrote. Write the "
                    "rule in plain Python on the tuples: +, *, comparisons, a loop over the dims."
                )
        return None

    def note(self, origin: str, name: str) -> None:
        calls = getattr(self, origin)
        if name not in calls:
            calls.append(name)


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


class _TorchCalls(TorchFunctionMode):
    """Notes every torch function and Tensor method called while it is active."""

    def __init__(self, borrowed: Borrowed) -> None:
        super().__init__()
        self.borrowed = borrowed

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 (torch's API)
        self.borrowed.note("torch", _torch_name(func))
        return func(*args, **(kwargs or {}))


def _torch_name(func: Callable) -> str:
    name = getattr(func, "__name__", repr(func))
    if name in ("__get__", "__set__"):  # a property such as Tensor.T
        return f"Tensor.{getattr(getattr(func, '__self__', None), '__name__', name)}"
    qualname = getattr(func, "__qualname__", "")
    return f"Tensor.{name}" if "Tensor" in qualname.split(".")[0] else f"torch.{name}"


_ORIGINS: dict[CodeType, tuple[str, str] | None] = {}


def _origin(code: CodeType) -> tuple[str, str] | None:
    """('course', name) for the course's own code (not the checkers), ('numpy', name) for
    numpy's, else None; cached per code object (the profiler asks on every call)."""
    if code not in _ORIGINS:
        where, origin = code.co_filename, None
        if "<" in code.co_name:  # a comprehension or lambda inside a function already noted
            pass
        elif where.startswith(COURSE_DIR) and not where.startswith(CHECKERS):
            module = Path(where).relative_to(Path(COURSE_DIR).parent).with_suffix("")
            origin = ("course", f"{'.'.join(module.parts)}.{code.co_qualname}")
        elif f"{os.sep}numpy{os.sep}" in where:
            origin = ("numpy", f"numpy {code.co_qualname}")
        _ORIGINS[code] = origin
    return _ORIGINS[code]


def _profiler(borrowed: Borrowed) -> Callable[[FrameType, str, Any], None]:
    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            origin = _origin(frame.f_code)
            if origin is not None:
                borrowed.note(*origin)
        elif event == "c_call" and str(getattr(arg, "__module__", "")).startswith("numpy"):
            borrowed.note("numpy", f"numpy.{arg.__name__}")

    return profile


def watched(fn: Callable, borrowed: Borrowed) -> Callable:
    """`fn`, noting into `borrowed` what each call of it asks torch, numpy or the course (a
    course helper passed as the answer itself is noted before any call)."""
    code = getattr(inspect.unwrap(getattr(fn, "__func__", fn)), "__code__", None)
    origin = _origin(code) if code is not None else None
    if origin and origin[0] == "course":
        borrowed.note(*origin)

    def run(*args: object) -> object:
        previous = sys.getprofile()
        sys.setprofile(_profiler(borrowed))
        try:
            with _TorchCalls(borrowed):
                return fn(*args)
        finally:
            sys.setprofile(previous)

    return run


# --- reading the mismatches -----------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """A cause read from the mismatches, and the mismatch that shows it best."""

    cause: str
    miss: Mismatch


Cause = Callable[[list[Mismatch]], Finding | None]
Probe = Callable[[tuple], Sequence[object]]  # a case's arguments -> other values of one param


@dataclass(frozen=True)
class Rule:
    """A rule the learner writes, and what its checker knows about getting it wrong.

    `truth`: the rule as arithmetic, torch's answer on arguments no case holds (a probe's);
    `form`: what is wrong with the form of an answer (a list for an int), or None, asked
    first; `probes`: for each named parameter, other values to try (a rule whose answer never
    changes with it ignores it); `why`: what each parameter means, said when it is ignored;
    `causes`: the rule's classic mistakes, each recognised from the mismatches or None;
    `success`: the passing message after n cases."""

    title: str  # "your address rule"
    signature: str  # "def address(index, stride, offset)"
    cases: Callable[[], Sequence[Case]]
    params: tuple[str, ...]
    success: Callable[[int], str] = str
    truth: Callable[..., object] | None = None
    form: Callable[[Mismatch], str | None] = lambda m: None
    probes: Mapping[str, Probe] = field(default_factory=dict)
    why: Mapping[str, str] = field(default_factory=dict)
    causes: tuple[Cause, ...] = ()


def judge(fn: object, rule: Rule) -> Verdict:
    """The engine run with torch's answers on the rule's layouts, smallest first: passed when
    `fn` agrees on every one and computed it itself, else the verdict naming the cause."""
    if not callable(fn):
        return failed(
            f"{rule.title}: give a function, e.g. {rule.signature}: ...",
            type(fn).__name__,
            "a function",
        )
    borrowed = Borrowed()
    verdict = Checking(
        cases=lambda: sorted(rule.cases(), key=lambda case: size_key(case.layout)),
        run=lambda answer, case: as_ints(answer(*case.args)),
        expect=lambda case: case.expected,
        agree=lambda got, expected: type(got) is type(expected) and got == expected,
        label=lambda case: case.label,
        success=rule.success,
        diagnoses=(lambda trials: _mismatch_verdict(fn, rule, _misses(trials)),),
    )(watched(fn, borrowed))
    if not verdict.attempted:
        return not_attempted(f"{rule.title} still raises NotImplementedError")
    return borrowed.verdict(rule.title) or verdict


def _misses(trials: list[Trial]) -> list[Mismatch]:
    """The trials the answer got wrong, as the oracle's mismatches (an error as its text)."""
    return [
        Mismatch(
            t.case, Raised(f"raised {type(t.error).__name__}: {t.error}") if t.error else t.got
        )
        for t in trials
        if t.missed
    ]


def _mismatch_verdict(fn: Callable, rule: Rule, misses: list[Mismatch]) -> Verdict:
    diagnoses = (
        lambda ms: smallest(ms, rule.form),
        beyond_three_dims,
        past_32_bits,  # before `ignored`: a clamped answer ignores every parameter there
        lambda ms: ignored(fn, rule, ms),
        *rule.causes,
        lambda ms: beyond_named_dims(ms, fewest=3),  # after the causes: a rule can be right
        raised,  # on 2 dims by coincidence (the inverse of a 2-dim permutation is itself)
    )
    finding = next((f for f in (d(misses) for d in diagnoses) if f), None) or Finding(
        "here is the smallest layout where torch disagrees", misses[0]
    )
    m, cause = finding.miss, finding.cause.rstrip(".")
    end = "" if cause.endswith("?") else "."
    return failed(
        f"{rule.title}: {cause}{end}\n  The layout: {m.case.label}",
        m.yours,
        m.case.expected,
    )


def beyond_three_dims(misses: list[Mismatch]) -> Finding | None:
    """Right on every layout of up to 3 dims, wrong with more: a rule that names the dims."""
    return beyond_named_dims(misses, fewest=4)


def beyond_named_dims(misses: list[Mismatch], fewest: int) -> Finding | None:
    """Right on every layout of fewer dims than every miss has (`fewest` of them at least):
    a rule that names the dims (the first two, the last two, three) instead of looping."""
    dims = min(len(m.case.layout.shape) for m in misses)
    if dims < fewest:
        return None
    m = misses[0]
    how = f" (on it your function {m.yours})" if m.raised else ""
    named = {2: "two", 3: "three"}.get(dims - 1, str(dims - 1))
    return Finding(
        f"it agrees with torch on every layout of up to {dims - 1} dims, but not with "
        f"{len(m.case.layout.shape)} dims{how}. A tensor can have any number of dims: loop "
        f"over all of them instead of naming {named}",
        m,
    )


def past_32_bits(misses: list[Mismatch]) -> Finding | None:
    """Wrong only where torch's answer passes 2^31 (04.address's far layouts): arithmetic that
    wraps, masks or clamps at 32 bits, or raises there, as numpy's int32 does."""
    big = [m for m in misses if isinstance(m.case.expected, int) and m.case.expected >= 2**31]
    if not big or len(big) < len(misses):
        return None
    m = big[0]
    how = f" (on it your function {m.yours})" if m.raised else ""
    return Finding(
        f"it agrees with torch wherever the answer is below 2^31 and nowhere past it{how}: "
        "your arithmetic stops at 32 bits (a mask, a clamp, a C int, numpy's int32). A "
        "float32 storage of 8 GiB has slots past 2^31, and torch keeps offsets, strides and "
        "addresses in 64 bits; Python's own ints never overflow, so plain + and * are exact",
        m,
    )


def ignored(fn: Callable, rule: Rule, misses: list[Mismatch]) -> Finding | None:
    """The parameters whose change never changes the learner's answer where it changes torch's
    (probed on up to 60 mismatches spread from the smallest to the largest: one where the
    answer moves clears it, so a parameter that small layouts can do without does not count):
    ignored, or a value from an example hard-coded."""
    answered = plain(misses)
    tried = answered[:: max(1, len(answered) // 60)]
    names = [n for n in rule.params if n in rule.probes and _ignores(fn, rule, n, tried)]
    if not names:
        return None
    quoted = [f"`{n}`" for n in names]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    why = " ".join(rule.why[n] for n in names if n in rule.why)
    one = len(names) == 1
    return Finding(
        f"your function gives the same answer whatever {listed} {'is' if one else 'are'}: "
        f"changing {'it' if one else 'them'} changes torch's answer, not yours (ignored, or "
        f"copied from an example?). {why}".rstrip(),
        tried[0],
    )


def _ignores(fn: Callable, rule: Rule, name: str, tried: list[Mismatch]) -> bool:
    position, truth, seen = rule.params.index(name), rule.truth, False
    for m in tried:
        args = m.case.args
        for other in rule.probes[name](args):
            changed = args[:position] + (other,) + args[position + 1 :]
            if as_ints(truth(*changed)) == as_ints(truth(*args)):
                continue  # this change does not move torch's answer either: no evidence
            try:
                same = as_ints(fn(*changed)) == as_ints(fn(*args))
            except Exception:  # the learner's code failing on the probe: not ignoring it
                return False
            if not same:
                return False
            seen = True
    return seen


def raised(misses: list[Mismatch]) -> Finding | None:
    """The smallest layout on which the learner's function raised."""
    m = next((m for m in misses if m.raised), None)
    if m is None:
        return None
    scalar = " (a 0-dim tensor: one element, no dims, so shape and stride are ())" * (
        not m.case.layout.shape
    )
    return Finding(f"on this layout{scalar} your function {m.yours}", m)


def plain(misses: list[Mismatch]) -> list[Mismatch]:
    """The mismatches where the learner's function returned an answer (it did not raise)."""
    return [m for m in misses if not m.raised]


def smallest(misses: list[Mismatch], test: Callable[[Mismatch], str | None]) -> Finding | None:
    """What `test` says about the smallest mismatch the learner's function answered (not
    raised on), or None: a rule's classic mistakes are read from its simplest failure."""
    answered = plain(misses)
    cause = test(answered[0]) if answered else None
    return Finding(cause, answered[0]) if cause else None


def read_smallest(*tests: Callable[[Mismatch], str | None]) -> tuple[Cause, ...]:
    """Causes that each read one classic mistake from the smallest answered mismatch."""
    return tuple(lambda misses, test=test: smallest(misses, test) for test in tests)
