"""05.keys_that_run: which dispatch keys run a kernel for a call, in the order they run.

The hidden calls vary both parameters: the op (in-place, out-of-place, a view, two autocast casts)
and the tensor (CPU, requires grad, meta, the emulated device's subclass, an inference tensor),
and the thread around the call (a dispatch mode, autocast, inference mode, no_grad), so an
answer that fixes either parameter, or remembers the path the notebook printed, gets some call
wrong. The dispatcher's own path (`call_path`) is the reference; a wrong walk is matched against
models of the classic mistakes on every call and told the one it reproduces.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from course import emps
from course.dispatch.exercises.common import (
    Answer,
    answer_key_verdict,
    answers_watched,
    attempt,
    closest_model,
)
from course.dispatch.tables import (
    active_keys,
    backend_key,
    call_path,
    computed_table,
    dispatch_keys,
    registered_kernels,
)
from course.dispatch.tracer import OpTracer
from course.exercises import Exercise, Verdict, failed, passed, register

ANSWER_KEYS = {
    "course.dispatch.tables.call_path": "call_path",
    "course.dispatch.tables.path_rows": "path_rows",
    "course.dispatch.tables.path_table": "path_table",
}


@contextlib.contextmanager
def _inference() -> Iterator[None]:
    with torch.inference_mode():
        yield


@contextlib.contextmanager
def _no_grad() -> Iterator[None]:
    with torch.no_grad():
        yield


def _made_outside_inference() -> torch.Tensor:
    """A normal tensor, as if made before the mode (the call's tensors are made inside its
    context): it keeps its autograd and ADInplaceOrView keys."""
    with torch.inference_mode(False):
        return torch.zeros(2, 3)


@contextlib.contextmanager
def _autocast() -> Iterator[None]:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        yield


@contextlib.contextmanager
def _tracing() -> Iterator[None]:
    with OpTracer():
        yield


def _nothing() -> contextlib.AbstractContextManager:
    return contextlib.nullcontext()


def _emulated(requires_grad: bool = False) -> torch.Tensor:
    return torch.zeros(2, 3, device=emps.DEVICE).requires_grad_(requires_grad)


@dataclass(frozen=True)
class Call:
    """One hidden call: what the learner is told it was, the op, a tensor maker, the thread."""

    label: str
    op: str
    make: Callable[[], torch.Tensor]
    context: Callable[[], contextlib.AbstractContextManager] = _nothing


CALLS = (
    Call("a CPU tensor", "addcmul_", lambda: torch.zeros(2, 3)),
    Call(
        "a CPU tensor that requires grad", "mul_.Tensor", lambda: torch.zeros(2, 3).requires_grad_()
    ),
    Call("a CPU tensor, out-of-place add", "add.Tensor", lambda: torch.zeros(2, 3)),
    Call("a CPU tensor, a view op", "transpose.int", lambda: torch.zeros(2, 3)),
    Call("a meta tensor", "addcmul_", lambda: torch.zeros(2, 3, device="meta")),
    Call("a meta tensor, out-of-place add", "add.Tensor", lambda: torch.zeros(2, 3, device="meta")),
    Call("an emulated-MPS tensor (a tensor subclass)", "addcmul_", _emulated),
    Call("an emulated-MPS tensor that requires grad", "mul_.Tensor", lambda: _emulated(True)),
    Call(
        "a CPU tensor inside a dispatch mode (the tracer)",
        "addcmul_",
        lambda: torch.zeros(2, 3),
        _tracing,
    ),
    Call("a CPU tensor under torch.autocast('cpu')", "mm", lambda: torch.zeros(2, 3), _autocast),
    Call(
        "a CPU tensor under torch.autocast('cpu')", "addcmul_", lambda: torch.zeros(2, 3), _autocast
    ),
    Call(
        "a CPU tensor under torch.autocast('cpu'), a loss",
        "mse_loss",
        lambda: torch.zeros(2, 3),
        _autocast,
    ),
    Call(
        "an inference tensor inside torch.inference_mode()",
        "addcmul_",
        lambda: torch.zeros(2, 3),
        _inference,
    ),
    Call(
        "a CPU tensor that requires grad, under torch.no_grad()",
        "mul_.Tensor",
        lambda: torch.zeros(2, 3).requires_grad_(),
        _no_grad,
    ),
    Call(
        "a normal CPU tensor (made outside) inside torch.inference_mode()",
        "addcmul_",
        _made_outside_inference,
        _inference,
    ),
)


def _walk(
    op: str,
    tensor: torch.Tensor,
    *,
    keys: Callable[[torch.Tensor], list[str]] = active_keys,
    table: Callable[[str], dict] = computed_table,
    skip: bool = True,
    python_ends: bool = True,
) -> list[str]:
    """The dispatcher's walk, or (with one argument changed) a classic mistake's model of it."""
    entries, found = table(op), []
    ends = {backend_key(tensor)} | ({"Python"} if python_ends else set())
    for key in keys(tensor):
        kernel = entries.get(key)
        if kernel is None or (skip and kernel.fallthrough):
            continue
        found.append(key)
        if key in ends:
            break
    return found


def _in_place(op: str) -> bool:
    """Whether an overload's name says in-place (addcmul_, mul_.Tensor)."""
    return op.split(".")[0].endswith("_")


def _matrix_product(op: str) -> bool:
    """Whether an overload's name is a matrix product (a rule of thumb for autocast)."""
    return op.split(".")[0] in ("mm", "addmm", "bmm", "matmul", "linear")


def _registered(op: str) -> dict:
    return {k.key: k for k in registered_kernels(op)}


@dataclass(frozen=True)
class Mistake:
    """A model of a wrong walk, and what the learner is told when their answers match it."""

    model: Callable[[str, torch.Tensor], list[str]]
    cause: str


MISTAKES = (
    Mistake(
        lambda op, t: _walk(op, t)[::-1],
        "the right keys in the wrong order: the highest-priority key runs first, and each "
        "kernel re-dispatches to the next one down to the backend",
    ),
    Mistake(
        lambda op, t: _walk(op, t, skip=False),
        "a key whose entry is a fallthrough runs no kernel: the dispatcher skips it (check "
        "computed_table(op)[key].fallthrough)",
    ),
    Mistake(
        lambda op, t: _walk(op, t, keys=dispatch_keys),
        "you walked the tensor's own key set, but a call also consults this thread's keys: an "
        "active dispatch mode adds Python, autocast adds Autocast, and inference mode drops "
        "autograd's. active_keys(tensor) gives the keys the call really consults",
    ),
    Mistake(
        lambda op, t: _walk(op, t, python_ends=False),
        "your walk went on past Python: there a tensor subclass's __torch_dispatch__ (or a "
        "dispatch mode) takes the call over, and the dispatcher's own walk ends",
    ),
    Mistake(
        lambda op, t: [k for k in _walk(op, t) if t.requires_grad or "Autograd" not in k],
        "requires_grad does not change the key set: autograd's key is there for every tensor "
        "(of a dtype that can have gradients), its kernel runs and checks requires_grad "
        "itself. Read the keys from active_keys(tensor), not from the tensor's flags",
    ),
    Mistake(
        lambda op, t: [k for k in _walk(op, t) if k != "ADInplaceOrView" or _in_place(op)],
        "ADInplaceOrView is not only for in-place ops: a view op (transpose, view, select) has a "
        "kernel there too, which makes the output share its base's version counter. Read "
        "computed_table(op) for the op, not its name",
    ),
    Mistake(
        lambda op, t: [k for k in _walk(op, t) if torch.is_grad_enabled() or "Autograd" not in k],
        "torch.no_grad() does not change the key set: autograd's kernel still runs, sees that "
        "grad mode is off and records no graph. Read the keys from active_keys(tensor), not "
        "from the grad mode",
    ),
    Mistake(
        lambda op, t: [
            k
            for k in _walk(op, t)
            if not (torch.is_inference_mode_enabled() and k == "ADInplaceOrView")
        ],
        "inference mode takes autograd's keys out of this thread, but a normal tensor (made "
        "outside the mode) still goes through ADInplaceOrView, which bumps its version counter; "
        "only an inference tensor lacks that key itself. active_keys(tensor) tells them apart",
    ),
    Mistake(
        lambda op, t: [k for k in _walk(op, t) if "Autocast" not in k or _matrix_product(op)],
        "autocast has kernels for more than matrix products: ops it runs in float32 for "
        "accuracy (losses such as mse_loss, prod) have one too, and under autocast it runs "
        "first. Read computed_table(op) for the op, not its name",
    ),
    Mistake(
        lambda op, t: [k for k in _walk(op, t) if "Autocast" not in k],
        "under torch.autocast this thread includes the Autocast key, and an op autocast casts "
        "(mm) has a kernel there, which runs first. active_keys(tensor) lists it: do not drop it",
    ),
    Mistake(
        lambda op, t: _walk(op, t, table=_registered),
        "registered_kernels lists what was registered for this op, under alias keys such as "
        "Autograd[alias] and without fallbacks; computed_table(op) says what each runtime key "
        "(AutogradCPU, Python, ...) really runs",
    ),
    Mistake(
        lambda op, t: _walk("addcmul_", t),
        "your walk read addcmul_'s table whatever the op: each op has its own table (an "
        "out-of-place op has a fallthrough at ADInplaceOrView, autocast casts mm but not "
        "addcmul_), so read computed_table(op) for the op you are given",
    ),
    Mistake(
        lambda op, t: _walk(op, torch.zeros(2, 3)),
        "your walk used the keys of a plain CPU tensor whatever the tensor: the tensor you are "
        "given carries its own keys (Meta, PrivateUse1, Python for a subclass)",
    ),
)


@dataclass(frozen=True)
class Run:
    """One hidden call as the learner's function answered it, beside the dispatcher's path
    and each mistake model's answer on the same call."""

    call: Call
    yours: Answer
    expected: Answer
    models: list[Answer]


def _check(fn: object) -> Verdict:
    if not callable(fn):
        return failed("give a function, e.g. def keys_that_run(op, tensor): return [...]", fn)
    results: list[Run] = []
    for call in CALLS:
        with call.context():
            tensor = call.make()
            expected = [step.key for step in call_path(call.op, tensor)]
            answers, used = answers_watched(fn, [(call.op, tensor)], ANSWER_KEYS)
            verdict = answer_key_verdict(
                "your keys_that_run",
                used,
                "Walk active_keys(tensor) through computed_table(op) yourself.",
            )
            if verdict is not None:
                return verdict
            yours = answers[0]
            if yours.error is None and isinstance(yours.value, tuple):
                yours = Answer(list(yours.value))
            models = [attempt(m.model, call.op, tensor) for m in MISTAKES]
        results.append(Run(call, yours, Answer(expected), models))
    wrong = [run for run in results if not run.yours.same_as(run.expected)]
    if not wrong:
        return passed(
            f"right on all {len(CALLS)} calls: the tensor's keys plus this thread's, highest "
            "priority first, fallthroughs skipped, down to the backend (or to Python)"
        )
    return _diagnosis(results, wrong[0])


def _diagnosis(results: list[Run], first: Run) -> Verdict:
    call, yours, expected = first.call, first.yours, first.expected
    where = f"on {call.label} ({call.op}) your keys are {yours.shown}"
    if yours.error is None and not isinstance(yours.value, list):
        return failed(f"{where}: return a list of key names", type(yours.value).__name__, "list")
    answered = [run.yours for run in results if run.yours.error is None]
    if len(answered) == len(results) and len({repr(a.value) for a in answered}) == 1:
        return failed(
            f"{where}, the same on all {len(results)} calls: a path remembered from the "
            "notebook, not a walk. Keys depend on the tensor, the thread and the op",
            yours.value,
            f"{len(expected.value)} keys",
        )
    index = results.index(first)
    modelled = [[run.models[m] for run in results] for m in range(len(MISTAKES))]
    best = closest_model(modelled, [run.yours for run in results], index)
    cause = MISTAKES[best].cause if best is not None else _unmodelled(yours, expected)
    return failed(
        f"{where}, not the keys that run: {cause}.", yours.value, f"{len(expected.value)} keys"
    )


def _unmodelled(yours: Answer, expected: Answer) -> str:
    if yours.error is not None:
        return "your function raised instead of returning the keys"
    mine, right = yours.value, expected.value
    if sorted(mine) == sorted(right):
        return (
            "the right keys in the wrong order: the highest-priority key runs first, as "
            "active_keys(tensor) lists them, and each kernel re-dispatches to the next one"
        )
    if mine and len(mine) < len(right) and mine == right[: len(mine)]:
        return (
            f"your walk stopped at {mine[-1]}, but that kernel does its job and re-dispatches: "
            "the walk ends only at the tensor's backend key, backend_key(tensor), or at Python"
        )
    extra = [k for k in yours.value if k not in expected.value]
    if extra:
        return f"{extra} run no kernel on this call"
    return f"some keys are missing: {len(yours.value)} of {len(expected.value)}"


def _stopping(stop: Callable[[str, torch.Tensor], bool], op: str, tensor: torch.Tensor):
    """The walk, ended where `stop(key, tensor)` says (a learner's own end condition)."""
    table, keys = computed_table(op), []
    for key in active_keys(tensor):
        entry = table.get(key)
        if entry is not None and not entry.fallthrough:
            keys.append(key)
            if stop(key, tensor):
                break
    return keys


def _reference():
    def keys_that_run(op, tensor):
        table = computed_table(op)
        keys = []
        for key in active_keys(tensor):
            kernel = table.get(key)
            if kernel is None or kernel.fallthrough:
                continue  # no kernel here: the dispatcher skips the key
            keys.append(key)
            if key in (backend_key(tensor), "Python"):
                break  # the backend computes, or a tensor subclass / mode takes over
        return keys

    return keys_that_run


register(
    Exercise(
        "05.keys_that_run",
        "Write keys_that_run(op, tensor): the dispatch keys whose kernels a call of `op` on "
        "`tensor` runs, in the order they run.",
        _check,
        "active_keys(tensor) lists the candidates in priority order (the tensor's keys plus this "
        "thread's). computed_table(op)[key] is the entry each key would run: skip missing ones "
        "and fallthroughs, and stop at backend_key(tensor) or at 'Python'.",
        _reference,
        (
            lambda: functools.partial(_walk, skip=False),
            lambda: functools.partial(_walk, keys=dispatch_keys),
            lambda: functools.partial(_walk, python_ends=False),
            lambda: functools.partial(_walk, table=_registered),
            lambda: lambda op, tensor: _reference()(op, tensor)[::-1],
            lambda: lambda op, tensor: _reference()("addcmul_", tensor),
            lambda: lambda op, tensor: _reference()(op, torch.zeros(2, 3)),
            lambda: lambda op, tensor: ["AutogradCPU", "ADInplaceOrView", "CPU"],
            lambda: lambda op, tensor: [step.key for step in call_path(op, tensor)],
            lambda: functools.partial(_stopping, lambda key, tensor: True),
            lambda: functools.partial(_stopping, lambda key, tensor: key.endswith("CPU")),
            lambda: lambda op, tensor: sorted(_reference()(op, tensor)),
            lambda: lambda op, tensor: set(_reference()(op, tensor)),
            lambda: lambda op, tensor: [k for k in _reference()(op, tensor) if "Autocast" not in k],
            lambda: (
                lambda op, tensor: [
                    k
                    for k in _reference()(op, tensor)
                    if tensor.requires_grad or "Autograd" not in k
                ]
            ),
            lambda: functools.partial(
                _stopping,
                lambda key, tensor: (
                    key == backend_key(tensor)
                    or (key == "Python" and type(tensor) is not torch.Tensor)
                ),
            ),
            lambda: functools.partial(_stopping, lambda key, tensor: False),
            lambda: (
                lambda op, tensor: [
                    k
                    for k in _reference()(op, tensor)
                    if torch.is_grad_enabled() or "Autograd" not in k
                ]
            ),
            lambda: (
                lambda op, tensor: [
                    k
                    for k in _reference()(op, tensor)
                    if not (torch.is_inference_mode_enabled() and k == "ADInplaceOrView")
                ]
            ),
            lambda: (
                lambda op, tensor: [
                    k for k in _reference()(op, tensor) if k != "ADInplaceOrView" or _in_place(op)
                ]
            ),
            lambda: (
                lambda op, tensor: [
                    k
                    for k in _reference()(op, tensor)
                    if "Autocast" not in k or _matrix_product(op)
                ]
            ),
        ),
    )
)
