"""01.snapshot: a copy of every weight that training cannot reach, on the device and the CPU.

Run on models the learner never sees, each then trained: on the CPU `.cpu()` returns the tensor
itself, so a copy only off the CPU is caught there. A snapshot that moves the model, switches off
its gradients or writes into it is told so before any training. The model-reading helpers here
serve 01.frozen_names as well.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from course import emps
from course.exercises import Exercise, Verdict, failed, passed, register
from course.model.runs import fresh_model, trainer
from course.model.sae import TopKSAE

LATER = emps.FIXED_MACOS14  # a profile without the story's bug, for hidden runs
SMALL = {"d_model": 64, "n_features": 256, "k": 8}
Layout = dict[str, tuple[torch.nn.Parameter, torch.device, bool]]


def values(model: TopKSAE) -> dict[str, torch.Tensor]:
    """A copy of every parameter's values, on the CPU: what a right snapshot holds. Read from
    the state_dict (detached tensors, parameters in named_parameters' order, then buffers),
    not the way the notebook's answer reads them: a student release must not hold that."""
    params = dict(model.named_parameters())
    return {name: t.cpu().clone() for name, t in model.state_dict().items() if name in params}


def layout(model: TopKSAE) -> Layout:
    """Each parameter, with the device and requires_grad it has now."""
    return {n: (p, p.device, p.requires_grad) for n, p in model.named_parameters()}


def moved(model: TopKSAE, before: dict[str, torch.Tensor]) -> list[str]:
    """The parameters whose values are no longer bitwise those in `before`."""
    now = values(model)
    return [n for n in before if not torch.equal(before[n], now[n])]


def left_alone(model: TopKSAE, then: Layout, where: str) -> Verdict | None:
    """Why a function that should only read the model changed it, if it did: moved (the run
    that follows would train on the CPU, where every weight trains), gradients switched off (a
    parameter that needs none does not train), or parameters replaced."""
    now = dict(model.named_parameters())
    for name, (param, device, grad) in then.items():
        if name in now and now[name].device != device:  # module.to() may swap the parameters
            return failed(
                f"{where}, your function moved the model to {now[name].device.type} (model.cpu() "
                "and model.to() move a module in place, and return it). Copy each parameter "
                "instead (p.detach().cpu().clone()) and leave the model where it trains",
                str(now[name].device),
                str(device),
            )
        if param.requires_grad != grad:
            return failed(
                f"{where}, your function changed {name}.requires_grad (requires_grad_() changes "
                "the parameter itself, and a parameter that needs no gradient does not train). "
                "Copy with .detach().clone(), which leaves the parameter as it is"
            )
    if list(now) != list(then) or any(now[n] is not p for n, (p, _, _) in then.items()):
        return failed(f"{where}, your function replaced the model's parameters: only read them")
    return None


# (what the hidden model is, how it is made, how it then trains)
CASES: tuple[tuple[str, Callable[[], TopKSAE], Callable[[TopKSAE], object]], ...] = (
    (
        "the story's model on the emulated device, trained on a later profile",
        lambda: fresh_model(LATER),
        trainer(LATER, steps=2, lr=1e-2),
    ),
    (
        "the same model on the CPU",
        lambda: fresh_model(device="cpu", **SMALL),
        trainer(steps=2, lr=1e-2),
    ),
    (
        "another seed and smaller sizes, trained with SGD",
        lambda: fresh_model(LATER, seed=7, **SMALL),
        trainer(LATER, steps=2, lr=1e-1, optimizer="sgd"),
    ),
)


def _keys(mine: object, model: TopKSAE, what: str) -> Verdict | None:
    names = [name for name, _ in model.named_parameters()]
    if not isinstance(mine, dict):
        return failed(
            f"return a dict from every parameter name to a copy of its values ({what})",
            type(mine).__name__,
            "dict",
        )
    missing = [name for name in names if name not in mine]
    if missing:
        return failed(
            f"on {what}, your snapshot has no entry for {', '.join(missing)}: keep every "
            "parameter, under its name from model.named_parameters()",
            sorted(map(str, mine)),
            names,
        )
    return None


def _not_a_copy(copied: object, param: torch.Tensor, where: str) -> Verdict | None:
    """Why one entry is not a tensor holding the parameter's values, before any training."""
    if isinstance(copied, list):
        return failed(
            f"{where} is a list (.tolist()): a copy, but of Python numbers, not a tensor. Keep "
            "a tensor (.clone()): it keeps the dtype and the shape, and torch.equal compares "
            "it with the parameter bitwise",
            "list",
            "torch.Tensor",
        )
    if isinstance(copied, np.ndarray):
        return failed(
            f"{where} is a NumPy array, not a tensor (and on the CPU, .numpy() without .copy() "
            "shares the tensor's memory, so training would change it). Keep a tensor copy "
            "(.clone()): torch.equal compares it with the parameter bitwise",
            "numpy.ndarray",
            "torch.Tensor",
        )
    if not isinstance(copied, torch.Tensor):
        return failed(f"{where} is not a tensor", type(copied).__name__, "torch.Tensor")
    if copied.dtype != param.dtype:
        return failed(
            f"{where} is {copied.dtype}, the parameter {param.dtype}: a converted copy is not "
            "the values (float16 rounds them, and MPS has no float64). Keep the dtype",
            copied.dtype,
            param.dtype,
        )
    if copied.shape != param.shape or not torch.equal(copied.detach().cpu(), param.detach().cpu()):
        return failed(
            f"{where} does not hold the parameter's values: copy them as they are",
            list(copied.shape),
            list(param.shape),
        )
    return None


def _changed(copied: torch.Tensor, param: torch.Tensor, where: str) -> Verdict:
    how = (
        "it is the parameter itself (named_parameters() hands out the parameters, not copies)"
        if copied is param
        else "it shares memory with the parameter (state_dict(), .detach() and .data are "
        "views of the same storage, and on the CPU .cpu() returns the tensor itself)"
    )
    return failed(
        f"{where} changed when the model trained: {how}. A snapshot must be a copy.",
        "changed with training",
        "the values before training",
    )


def _wrote_into(model: TopKSAE, before: dict[str, torch.Tensor], where: str) -> Verdict | None:
    changed = moved(model, before)
    if not changed:
        return None
    return failed(
        f"{where}, your function changed the values of {', '.join(changed)}: a snapshot only "
        "reads the parameters (an in-place op on p, p.data or a view writes into the model)"
    )


def _on(what: str, make: Callable, train: Callable, snapshot: Callable) -> Verdict | None:
    """The snapshot's flaw on one hidden model: the model changed, a wrong or missing entry
    before training, or an entry that training then reached."""
    model = make()
    params, then, before = dict(model.named_parameters()), layout(model), values(model)
    mine = snapshot(model)
    where = f"on {what}"
    verdict = left_alone(model, then, where) or _wrote_into(model, before, where)
    verdict = verdict or _keys(mine, model, what)
    for name, param in params.items():
        verdict = verdict or _not_a_copy(mine[name], param, f"{where}, your snapshot of {name}")
    if verdict is not None:
        return verdict
    train(model)
    for name, param in params.items():
        if not torch.equal(mine[name].detach().cpu(), before[name]):
            return _changed(mine[name], param, f"{where}, your snapshot of {name}")
    return None


def _check_snapshot(snapshot: Callable) -> Verdict:
    verdict = next(filter(None, (_on(*case, snapshot) for case in CASES)), None)
    return verdict or passed("a real copy: training cannot reach it, on any device.")


register(
    Exercise(
        name="01.snapshot",
        prompt="Write snapshot(model) -> dict: every parameter's name -> a tensor copy of its "
        "values that later training cannot change.",
        checker=_check_snapshot,
        hint="model.named_parameters() gives (name, parameter) pairs. A copy needs .clone(); "
        ".detach() and state_dict() share the parameter's memory.",
        minutes=6,
    )
)
