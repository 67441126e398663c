"""05.kernel_for: follow the registry from an op to the kernel a backend runs.

The hidden variants come from the installed registry (so the checker follows torch 2.13 to 2.15):
structured delegates, ops with a table of their own, an out= kernel itself, and delegates that
still name their own kernel for a backend (sparse tensors). Several backends for one op and
several ops for one backend, so an answer that ignores either parameter gets some variant wrong.
And backends the registry gives an op no kernel for: there an answer must find none (raise, or
return None), because a lookup that falls back to another backend's kernel (CPU's, say) is right
on every backend that has a row and silently wrong where a call would reach no kernel at all.
A wrong answer is told the classic mistake whose model it follows on every variant.
"""

from __future__ import annotations

from course.dispatch.exercises.common import (
    Answer,
    a_function,
    attempt,
    closest_model,
    reader_used,
)
from course.dispatch.registry import RegistryEntry, backend_kernel, entries, kernel_entry, lookup
from course.errors import CourseError
from course.exercises import Exercise, Verdict, failed, register
from course.exercises.blanks import is_scaffold
from course.exercises.engine import Checking, Trial

# (op, backend) candidates; those whose kernel the installed registry names are the variants.
CANDIDATES = (
    ("addcdiv_", "MPS"),
    ("addcmul_", "CPU"),
    ("lerp_.Scalar", "MPS"),
    ("sqrt_", "CUDA"),
    ("mul_.Tensor", "CPU"),
    ("mul_.Tensor", "SparseCPU"),
    ("add.Tensor", "MPS"),
    ("add.Tensor", "SparseCPU"),
    ("add.out", "MPS"),
    ("masked_fill_.Scalar", "CPU"),
    ("masked_fill_.Scalar", "MPS"),
    ("masked_fill_.Scalar", "QuantizedCPU"),
    ("addmm", "CPU"),
    ("addmm", "XPU"),
    ("addmm", "SparseCPU"),
    ("relu_", "MPS"),
)

# (op, backend) pairs neither the op's rows nor its delegate's name: no kernel to find there.
NO_KERNEL = (
    ("addcmul_", "SparseCPU"),
    ("masked_fill_.Scalar", "SparseCPU"),
)


def variants() -> list[tuple[str, str]]:
    """The candidates the installed registry names a kernel for: a row of the op's own, or of
    its structured delegate (where `backend_kernel`, the truth, reads it)."""
    table = entries()
    return [
        (op, backend)
        for op, backend in CANDIDATES
        if op in table
        and (
            backend in lookup(op).backend_kernels() or backend in kernel_entry(op).backend_kernels()
        )
    ]


def _truth(case: tuple[str, str]) -> str | None:
    """The kernel the registry names, or None where it names none (a NO_KERNEL case)."""
    try:
        return backend_kernel(*case)
    except CourseError:
        return None


def cases() -> list[tuple[str, str]]:
    """The variants, then the pairs the installed registry really gives no kernel."""
    return variants() + [case for case in NO_KERNEL if case[0] in entries() and not _truth(case)]


def _run(kernel_for, case: tuple[str, str]) -> object:
    """The learner's answer on a case; where the registry names no kernel, an exception is the
    honest answer (the registry's own `backend_kernels()[backend]` raises), so it reads as None."""
    try:
        return kernel_for(*case)
    except Exception as exc:
        if is_scaffold(exc) or case not in NO_KERNEL:
            raise
        return None


def _fell_back(trials: list[Trial]) -> Verdict | None:
    """Right wherever a kernel exists, a kernel's name where none does: a silent fallback."""
    misses = [t for t in trials if t.missed]
    if any(t.expected is not None or not isinstance(t.got, str) for t in misses):
        return None
    (op, backend), got = misses[0].case, misses[0].got
    whose = [
        f"{source.name}'s kernel for {b}"
        for source in _sources(op)
        for b, kernel in source.backend_kernels().items()
        if kernel == got
    ]
    return failed(
        f"kernel_for({op!r}, {backend!r}) returned {got!r}, but the registry names no "
        f"{backend} kernel for {op}, neither in its own rows nor in its delegate's"
        + (f": {got!r} is {whose[0]}" if whose else "")
        + ". Your lookup falls back to another backend's kernel, and a call there would never "
        "run it. Where no row names the backend, raise (as backend_kernels()[backend] does) or "
        "return None.",
        got,
        "no kernel (an exception, or None)",
    )


def _sources(op: str) -> list[RegistryEntry]:
    """The entries whose rows can name the op's kernel: its own, then its delegate's."""
    entry = lookup(op)
    return [entry] + ([lookup(entry.structured_delegate)] if entry.structured_delegate else [])


# ---- the classic mistakes, as models run on the same variants ----------------------------------


def _delegate_by_name(op: str, backend: str) -> str:
    """The delegate guessed from the op's name (addcmul_ -> addcmul.out), not read."""
    own = lookup(op).backend_kernels()
    if backend in own:
        return own[backend]
    return lookup(op.split(".")[0].rstrip("_") + ".out").backend_kernels()[backend]


def _raw_rows(op: str, backend: str) -> str:
    entry = lookup(op)
    if backend in entry.dispatch or not entry.structured_delegate:
        return entry.dispatch[backend]
    return lookup(entry.structured_delegate).dispatch[backend]


def _row_naming(op: str, backend: str) -> str:
    """The `dispatch:` key (of the op's own entry or its delegate's) that names `backend`."""
    for source in (lookup(op), kernel_entry(op)):
        for keys in source.dispatch:
            if backend in (k.strip() for k in keys.split(",")):
                return keys
    return backend


def _why_own(op: str, backend: str) -> str:
    """What the op's own entry says about `backend`, for a rule that skipped it."""
    if not lookup(op).structured_delegate:
        return (
            f"{op} is not a structured delegate (its structured_delegate is None): its own "
            "entry has the `dispatch:` table"
        )
    return (
        f"{op} names a {backend} kernel in a row of its own, and that row wins: a delegate's "
        "structured kernel serves only the backends the op does not list itself (sparse "
        "tensors get their own kernels, for instance). Read the op's own rows first"
    )


# (a model of a wrong rule, what the learner is told when their answers match it; `{own}` is
# what the op's own entry says about the backend, `{row}` the `dispatch:` key naming it)
MISTAKES = (
    (
        lambda op, b: lookup(op).structured_delegate,
        "that is the overload {op} delegates to, not a kernel: follow it to that entry and read "
        "its row for the backend",
    ),
    (
        lambda op, b: lookup(op).backend_kernels()[b],
        "{op} has no `dispatch:` row for {b} of its own: it is a structured_delegate of "
        "{delegate}, whose row names the kernel (the code generator builds the op around that "
        "one out= kernel)",
    ),
    (
        lambda op, b: lookup(lookup(op).structured_delegate).backend_kernels()[b],
        "your rule follows structured_delegate whatever the op, but {own}",
    ),
    (lambda op, b: kernel_entry(op).backend_kernels()[b], "{own}"),
    (
        _delegate_by_name,
        "{op} delegates to {delegate}: the overload to follow is read from the entry's "
        "structured_delegate, not built from the op's name (an overload's out= variant is not "
        "always named <op>.out)",
    ),
    (
        _raw_rows,
        "{row!r}, a key of `.dispatch`, names several backends at once, so looking a single "
        "backend up in `.dispatch` misses; `.backend_kernels()` has one entry per backend",
    ),
)


def _diagnosis(trials: list[Trial]) -> Verdict:
    """The first miss, told the cause the whole run shows (a model, a parameter ignored...)."""
    index = next(i for i, t in enumerate(trials) if t.missed)
    cases, answers = [t.case for t in trials], [Answer.of(t) for t in trials]
    (op, backend), yours = cases[index], answers[index]
    where = f"kernel_for({op!r}, {backend!r}) {yours.shown}"
    values = {repr(a.value) for a in answers if a.error is None}
    if len(values) == 1 and all(a.error is None for a in answers):
        return failed(
            f"{where}, and the same for every one of {len(cases)} ops and backends: a name "
            "remembered from the notebook is not a rule. Read the registry for the op and "
            "backend you are given",
            yours.value,
            "a kernel that depends on op and backend",
        )
    modelled = [[attempt(model, *case) for case in cases] for model, _ in MISTAKES]
    best = closest_model(modelled, answers, index)
    cause = (
        _substring_row(op, backend, yours)
        or (_told(MISTAKES[best][1], op, backend) if best is not None else None)
        or _ignored(trials)
        or _other_backend(op, backend, yours)
        or _not_in_registry(op, backend, yours)
        or (
            "not the kernel the registry names. An op's own `dispatch:` row for the backend "
            "wins; without one, its structured_delegate's row names the kernel"
        )
    )
    return failed(
        f"{where}: {cause}.",
        yours.value if yours.error is None else yours.shown,
        trials[index].expected or "no kernel (an exception, or None)",
    )


def _told(cause: str, op: str, backend: str) -> str:
    """A mistake's cause, said about this op and backend."""
    delegate, own = lookup(op).structured_delegate, _why_own(op, backend)
    return cause.format(op=op, b=backend, delegate=delegate, own=own, row=_row_naming(op, backend))


def _substring_row(op: str, backend: str, yours: Answer) -> str | None:
    """A kernel from a row that names `backend` only inside a longer name ('SparseCPU')."""
    for source in _sources(op):
        for keys, kernel in source.dispatch.items():
            names = [k.strip() for k in keys.split(",")]
            if kernel == yours.value and backend in keys and backend not in names:
                return (
                    f"that kernel's row is {keys!r}: your rule matched {backend!r} inside a "
                    "longer backend name. Compare whole backend names, as "
                    "`.backend_kernels()` does"
                )
    return None


def _other_backend(op: str, backend: str, yours: Answer) -> str | None:
    """A kernel from the right entry's row for another backend: the backend was not read."""
    for source in _sources(op):
        others = [b for b, k in source.backend_kernels().items() if k == yours.value]
        if yours.error is None and others and backend not in others:
            return (
                f"that is {source.name}'s kernel for {others[0]}, not for {backend}: read the "
                "row for the backend you are given"
            )
    return None


def _not_in_registry(op: str, backend: str, yours: Answer) -> str | None:
    """None, or a name that no row of the op or its delegate holds: not read, made up."""
    if yours.error is not None:
        return None
    if yours.value is None:
        return (
            f"None: {op}'s own entry has no row for {backend}, so the kernel is in the row of "
            "its structured_delegate"
            if lookup(op).structured_delegate
            else f"None: read {op}'s own `dispatch:` row for {backend}"
        )
    if all(yours.value not in source.backend_kernels().values() for source in _sources(op)):
        return (
            f"{yours.value!r} is in no row of {op} or of its delegate: a kernel's name is read "
            "from the registry, not built from the op's and the backend's"
        )
    return None


WHY = {
    "backend": "each backend has its own row (masked_fill_ has one kernel for CPU, another "
    "for MPS), so the backend you are given picks the kernel",
    "op": "each op has its own entry, so the op you are given picks the row you read",
}


def _ignored(trials: list[Trial]) -> str | None:
    """A parameter whose change never changes the learner's answer where it changes the
    registry's: ignored, or fixed to the notebook's example."""
    for position, name in ((1, "backend"), (0, "op")):
        groups: dict[str, list[Trial]] = {}
        for t in trials:
            groups.setdefault(t.case[1 - position], []).append(t)
        telling = [
            g
            for g in groups.values()
            if len({t.expected for t in g}) > 1 and all(t.error is None for t in g)
        ]
        if telling and all(len({repr(t.got) for t in g}) == 1 for g in telling):
            example = telling[0][0].case[1 - position]
            return (
                f"your answer never changes with `{name}` (for {example!r}: the same kernel "
                f"whatever the {name}), but the registry's does: {WHY[name]}"
            )
    return None


CHECKING = Checking(
    cases=cases,
    run=_run,
    expect=_truth,
    success=lambda n: (
        f"right on {n} ops and backends: a row of the op's own first, else its "
        "structured delegate's, with whole backend names, and none where no row names the backend"
    ),
    form=a_function("def kernel_for(op, backend): return ..."),
    ready_made={"backend_kernel": backend_kernel, "kernel_entry": kernel_entry},
    borrowed=reader_used(
        "your kernel_for",
        "Write the walk with lookup(op): its .structured_delegate and .backend_kernels().",
    ),
    diagnoses=(_fell_back, _diagnosis),
)

register(
    Exercise(
        "05.kernel_for",
        "Write kernel_for(op, backend): the C++ kernel the registry names for `op` on `backend`.",
        CHECKING,
        "lookup(op) gives the registry entry; entry.backend_kernels() maps each backend to a "
        "kernel. If the op has a row of its own for the backend, that is the kernel; if not, "
        "its structured_delegate's entry has the row. If neither names the backend, there is "
        "no kernel: raise or return None.",
        minutes=10,
    )
)
