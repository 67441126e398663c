"""05.keys_that_run: which dispatch keys run a kernel for a call, in the order they run.

The hidden calls vary the op (in-place, out-of-place, a view, autocast casts), the tensor (CPU,
requires grad, meta, the emulated device's subclass, an inference tensor) and the thread (a
dispatch mode, autocast, inference mode, no_grad). The dispatcher's own path (`call_path`) is the
truth; a wrong walk is told the classic mistake whose model it follows on every call.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass

import torch

from course import emps
from course.dispatch.exercises.common import Answer, a_function, attempt, closest_model, reader_used
from course.dispatch.tables import (
    active_keys,
    backend_key,
    call_path,
    computed_table,
    dispatch_keys,
    path_rows,
    path_table,
    registered_kernels,
)
from course.dispatch.tracer import OpTracer
from course.exercises import Exercise, Verdict, failed, register
from course.exercises.engine import Checking, Trial


def _made_outside_inference() -> torch.Tensor:
    """A normal tensor, as if made before the mode (the call's tensors are made inside its
    context): it keeps its autograd and ADInplaceOrView keys."""
    with torch.inference_mode(False):
        return torch.zeros(2, 3)


def _zeros(device: str = "cpu", requires_grad: bool = False) -> torch.Tensor:
    return torch.zeros(2, 3, device=device).requires_grad_(requires_grad)


_AUTOCAST = functools.partial(torch.autocast, "cpu", dtype=torch.bfloat16)


@dataclass(frozen=True)
class Call:
    """One hidden call: what the learner is told it was, the op, a tensor maker, the thread."""

    label: str
    op: str
    make: Callable[[], torch.Tensor] = _zeros
    context: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext


CALLS = (
    Call("a CPU tensor", "addcmul_"),
    Call("a CPU tensor that requires grad", "mul_.Tensor", lambda: _zeros(requires_grad=True)),
    Call("a CPU tensor, out-of-place add", "add.Tensor"),
    Call("a CPU tensor, a view op", "transpose.int"),
    Call("a meta tensor", "addcmul_", lambda: _zeros("meta")),
    Call("a meta tensor, out-of-place add", "add.Tensor", lambda: _zeros("meta")),
    Call("an emulated-MPS tensor (a tensor subclass)", "addcmul_", lambda: _zeros(emps.DEVICE)),
    Call(
        "an emulated-MPS tensor that requires grad",
        "mul_.Tensor",
        lambda: _zeros(emps.DEVICE, True),
    ),
    Call("a CPU tensor inside a dispatch mode (the tracer)", "addcmul_", context=OpTracer),
    Call("a CPU tensor under torch.autocast('cpu')", "mm", context=_AUTOCAST),
    Call("a CPU tensor under torch.autocast('cpu')", "addcmul_", context=_AUTOCAST),
    Call("a CPU tensor under torch.autocast('cpu'), a loss", "mse_loss", context=_AUTOCAST),
    Call(
        "an inference tensor inside torch.inference_mode()",
        "addcmul_",
        context=torch.inference_mode,
    ),
    Call(
        "a CPU tensor that requires grad, under torch.no_grad()",
        "mul_.Tensor",
        lambda: _zeros(requires_grad=True),
        torch.no_grad,
    ),
    Call(
        "a normal CPU tensor (made outside) inside torch.inference_mode()",
        "addcmul_",
        _made_outside_inference,
        torch.inference_mode,
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


def _without(drops: Callable[[str, torch.Tensor, str], bool]) -> Callable:
    """A model of a walk that leaves out the keys `drops(op, tensor, key)` names."""
    return lambda op, t: [k for k in _walk(op, t) if not drops(op, t, k)]


# A rule of thumb for the ops autocast casts, read from an op's name instead of its table.
MATRIX_PRODUCTS = ("mm", "addmm", "bmm", "matmul", "linear")

MISTAKES = (  # (a model of a wrong walk, what the learner is told when their answers match it)
    (
        lambda op, t: _walk(op, t)[::-1],
        "the right keys in the wrong order: the highest-priority key runs first, and each "
        "kernel re-dispatches to the next one down to the backend",
    ),
    (
        functools.partial(_walk, skip=False),
        "a key whose entry is a fallthrough runs no kernel: the dispatcher skips it (check "
        "computed_table(op)[key].fallthrough)",
    ),
    (
        functools.partial(_walk, keys=dispatch_keys),
        "you walked the tensor's own key set, but a call also consults this thread's keys: an "
        "active dispatch mode adds Python, autocast adds Autocast, and inference mode drops "
        "autograd's. active_keys(tensor) gives the keys the call really consults",
    ),
    (
        functools.partial(_walk, python_ends=False),
        "your walk went on past Python: there a tensor subclass's __torch_dispatch__ (or a "
        "dispatch mode) takes the call over, and the dispatcher's own walk ends",
    ),
    (
        _without(lambda op, t, k: not t.requires_grad and "Autograd" in k),
        "requires_grad does not change the key set: autograd's key is there for every tensor "
        "(of a dtype that can have gradients), its kernel runs and checks requires_grad "
        "itself. Read the keys from active_keys(tensor), not from the tensor's flags",
    ),
    (
        _without(lambda op, t, k: k == "ADInplaceOrView" and not op.split(".")[0].endswith("_")),
        "ADInplaceOrView is not only for in-place ops: a view op (transpose, view, select) has a "
        "kernel there too, which makes the output share its base's version counter. Read "
        "computed_table(op) for the op, not its name",
    ),
    (
        _without(lambda op, t, k: not torch.is_grad_enabled() and "Autograd" in k),
        "torch.no_grad() does not change the key set: autograd's kernel still runs, sees that "
        "grad mode is off and records no graph. Read the keys from active_keys(tensor), not "
        "from the grad mode",
    ),
    (
        _without(lambda op, t, k: torch.is_inference_mode_enabled() and k == "ADInplaceOrView"),
        "inference mode takes autograd's keys out of this thread, but a normal tensor (made "
        "outside the mode) still goes through ADInplaceOrView, which bumps its version counter; "
        "only an inference tensor lacks that key itself. active_keys(tensor) tells them apart",
    ),
    (
        _without(lambda op, t, k: "Autocast" in k and op.split(".")[0] not in MATRIX_PRODUCTS),
        "autocast has kernels for more than matrix products: ops it runs in float32 for "
        "accuracy (losses such as mse_loss, prod) have one too, and under autocast it runs "
        "first. Read computed_table(op) for the op, not its name",
    ),
    (
        _without(lambda op, t, k: "Autocast" in k),
        "under torch.autocast this thread includes the Autocast key, and an op autocast casts "
        "(mm) has a kernel there, which runs first. active_keys(tensor) lists it: do not drop it",
    ),
    (
        functools.partial(_walk, table=lambda op: {k.key: k for k in registered_kernels(op)}),
        "registered_kernels lists what was registered for this op, under alias keys such as "
        "Autograd[alias] and without fallbacks; computed_table(op) says what each runtime key "
        "(AutogradCPU, Python, ...) really runs",
    ),
    (
        lambda op, t: _walk("addcmul_", t),
        "your walk read addcmul_'s table whatever the op: each op has its own table (an "
        "out-of-place op has a fallthrough at ADInplaceOrView, autocast casts mm but not "
        "addcmul_), so read computed_table(op) for the op you are given",
    ),
    (
        lambda op, t: _walk(op, torch.zeros(2, 3)),
        "your walk used the keys of a plain CPU tensor whatever the tensor: the tensor you are "
        "given carries its own keys (Meta, PrivateUse1, Python for a subclass)",
    ),
)


def _on(call: Call, fn: Callable[[str, torch.Tensor], object]) -> object:
    """`fn(op, tensor)` for one call: the tensor made, and `fn` run, inside the call's context."""
    with call.context():
        return fn(call.op, call.make())


def _run(keys_that_run: Callable, call: Call) -> object:
    """The learner's keys for one call (a tuple of keys counts as the list it holds)."""
    keys = _on(call, keys_that_run)
    return list(keys) if isinstance(keys, tuple) else keys


def _diagnosis(trials: list[Trial]) -> Verdict:
    """The first miss, told the mistake the whole run follows (or what is off on it)."""
    index = next(i for i, t in enumerate(trials) if t.missed)
    first, answers = trials[index], [Answer.of(t) for t in trials]
    yours, expected = answers[index], first.expected
    where = f"on {first.label} ({first.case.op}) your keys are {yours.shown}"
    if yours.error is None and not isinstance(yours.value, list):
        return failed(f"{where}: return a list of key names", type(yours.value).__name__, "list")
    answered = [a for a in answers if a.error is None]
    if len(answered) == len(answers) and len({repr(a.value) for a in answered}) == 1:
        return failed(
            f"{where}, the same on all {len(answers)} calls: a path remembered from the "
            "notebook, not a walk. Keys depend on the tensor, the thread and the op",
            yours.value,
            f"{len(expected)} keys",
        )
    models = [_on(t.case, lambda op, x: [attempt(m, op, x) for m, _ in MISTAKES]) for t in trials]
    modelled = list(zip(*models, strict=True))
    best = closest_model(modelled, answers, index)
    cause = MISTAKES[best][1] if best is not None else _unmodelled(yours, expected)
    return failed(f"{where}, not the keys that run: {cause}.", yours.value, f"{len(expected)} keys")


def _unmodelled(yours: Answer, right: list[str]) -> str:
    if yours.error is not None:
        return "your function raised instead of returning the keys"
    mine = yours.value
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
    extra = [k for k in mine if k not in right]
    if extra:
        return f"{extra} run no kernel on this call"
    return f"some keys are missing: {len(mine)} of {len(right)}"


CHECKING = Checking(
    cases=lambda: CALLS,
    run=_run,
    expect=lambda call: _on(call, lambda op, t: [step.key for step in call_path(op, t)]),
    success=lambda n: (
        f"right on all {n} calls: the tensor's keys plus this thread's, highest "
        "priority first, fallthroughs skipped, down to the backend (or to Python)"
    ),
    label=lambda call: call.label,
    form=a_function("def keys_that_run(op, tensor): return [...]"),
    ready_made={"call_path": call_path, "path_rows": path_rows, "path_table": path_table},
    borrowed=reader_used(
        "your keys_that_run", "Walk active_keys(tensor) through computed_table(op) yourself."
    ),
    diagnoses=(_diagnosis,),
)

register(
    Exercise(
        "05.keys_that_run",
        "Write keys_that_run(op, tensor): the dispatch keys whose kernels a call of `op` on "
        "`tensor` runs, in the order they run.",
        CHECKING,
        "active_keys(tensor) lists the candidates in priority order (the tensor's keys plus this "
        "thread's). computed_table(op)[key] is the entry each key would run: skip missing ones "
        "and fallthroughs, and stop at backend_key(tensor) or at 'Python'.",
        minutes=15,
    )
)
