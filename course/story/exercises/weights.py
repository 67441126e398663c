"""01.snapshot, 01.frozen_names, 01.frozen and the 01.how_many_frozen prediction.

Which weights never moved is the story's first real measurement, so each piece is checked
where it breaks: a snapshot on the CPU (where `.cpu()` returns the tensor itself) as well as on
the device, and one that moves the model or switches off its gradients is told so; the
frozen-names check on runs where the answer differs (a later profile, the CPU, a run that
trains only the decoder, a learning rate so small that weights move by one float32 step) and on
hand-made "runs" that only an exact, whole-tensor comparison notices (two values swapping
places, a change that keeps the sum, NaN, a value moved by 1e-38, one float32 step of the
largest weight). Its `train` returns nothing to read, so the course's own record of what froze
cannot stand in for the comparison, and the model it was handed must be the one that trained.
The names the text then builds on are checked against the model they were measured on, and
that model against the story's run redone by the checker (on one thread, and up to the rounding
another thread count gives): the same names from 2 steps or another learning rate come from
another run than the one the text builds on.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

import numpy as np
import torch

from course import emps
from course.devices import pinned_threads
from course.errors import CourseError
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    passed,
    register,
    register_prediction,
)
from course.model.runs import dataset, fresh_model, trainer
from course.model.sae import TopKSAE

LATER = emps.FIXED_MACOS14  # a profile without the story's bug, for hidden runs
SMALL = {"d_model": 64, "n_features": 256, "k": 8}


@dataclass(frozen=True)
class Case:
    """A hidden run: the model, what trains it, and why a right answer must get it right.

    `subtle`: only an exact comparison of whole tensors sees what this run changed.
    `story`: the story's profile and init, so its answer is the one 01.frozen measures next:
    a miss on it does not show the expected names."""

    what: str
    make: Callable[[], TopKSAE]
    train: Callable[[TopKSAE], object]
    why: str = ""
    subtle: bool = False
    story: bool = False


def _names(model: TopKSAE) -> list[str]:
    return [name for name, _ in model.named_parameters()]


def _values(model: TopKSAE) -> dict[str, torch.Tensor]:
    return {name: p.detach().cpu().clone() for name, p in model.named_parameters()}


# ---- 01.snapshot -----------------------------------------------------------------------------

SNAPSHOT_CASES = (
    Case(
        "the story's model on the emulated device, trained on a later profile",
        lambda: fresh_model(LATER),
        trainer(LATER, steps=2, lr=1e-2),
    ),
    Case(
        "the same model on the CPU",
        lambda: fresh_model(device="cpu", **SMALL),
        trainer(steps=2, lr=1e-2),
    ),
    Case(
        "another seed and smaller sizes, trained with SGD",
        lambda: fresh_model(LATER, seed=7, **SMALL),
        trainer(LATER, steps=2, lr=1e-1, optimizer="sgd"),
    ),
)


def _snapshot_keys(mine: object, model: TopKSAE, what: str) -> Verdict | None:
    names = _names(model)
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


def _not_a_copy(values: object, param: torch.Tensor, where: str) -> Verdict | None:
    """Why one entry is not a tensor holding the parameter's values, before any training."""
    if isinstance(values, list):
        return failed(
            f"{where} is a list (.tolist()): a copy, but of Python numbers, not a tensor. Keep "
            "a tensor (.clone()): it keeps the dtype and the shape, and torch.equal compares "
            "it with the parameter bitwise",
            "list",
            "torch.Tensor",
        )
    if isinstance(values, np.ndarray):
        return failed(
            f"{where} is a NumPy array, not a tensor (and on the CPU, .numpy() without .copy() "
            "shares the tensor's memory, so training would change it). Keep a tensor copy "
            "(.clone()): torch.equal compares it with the parameter bitwise",
            "numpy.ndarray",
            "torch.Tensor",
        )
    if not isinstance(values, torch.Tensor):
        return failed(f"{where} is not a tensor", type(values).__name__, "torch.Tensor")
    if values.dtype != param.dtype:
        return failed(
            f"{where} is {values.dtype}, the parameter {param.dtype}: a converted copy is not "
            "the values (float16 rounds them, and MPS has no float64). Keep the dtype",
            values.dtype,
            param.dtype,
        )
    if values.shape != param.shape or not torch.equal(values.detach().cpu(), param.detach().cpu()):
        return failed(
            f"{where} does not hold the parameter's values: copy them as they are",
            list(values.shape),
            list(param.shape),
        )
    return None


def _changed(values: torch.Tensor, param: torch.Tensor, where: str) -> Verdict:
    how = (
        "it is the parameter itself (named_parameters() hands out the parameters, not copies)"
        if values is param
        else "it shares memory with the parameter (state_dict(), .detach() and .data are "
        "views of the same storage, and on the CPU .cpu() returns the tensor itself)"
    )
    return failed(
        f"{where} changed when the model trained: {how}. A snapshot must be a copy.",
        "changed with training",
        "the values before training",
    )


Layout = dict[str, tuple[torch.nn.Parameter, torch.device, bool]]


def _moved(model: TopKSAE, before: dict[str, torch.Tensor]) -> list[str]:
    """The parameters whose values are no longer bitwise those in `before`."""
    now = _values(model)
    return [n for n in before if not torch.equal(before[n], now[n])]


def _same_values(model: TopKSAE, before: dict[str, torch.Tensor], where: str) -> Verdict | None:
    changed = _moved(model, before)
    if not changed:
        return None
    return failed(
        f"{where}, your function changed the values of {', '.join(changed)}: a snapshot only "
        "reads the parameters (an in-place op on p, p.data or a view writes into the model)"
    )


def _layout(model: TopKSAE) -> Layout:
    """Each parameter, with the device and requires_grad it has now."""
    return {n: (p, p.device, p.requires_grad) for n, p in model.named_parameters()}


def _left_alone(model: TopKSAE, then: Layout, where: str) -> Verdict | None:
    """Why a function that should only read the model changed it, if it did.

    A snapshot that moves the model (`model.cpu()` moves a module in place, and returns it)
    makes the run that follows train elsewhere, on the CPU, where every weight trains; one that
    turns off requires_grad stops a parameter from training at all."""
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


def _check_snapshot(fn: Callable) -> Verdict:
    for case in SNAPSHOT_CASES:
        model = case.make()
        params, then, before = dict(model.named_parameters()), _layout(model), _values(model)
        mine = fn(model)
        verdict = (
            _left_alone(model, then, f"on {case.what}")
            or _same_values(model, before, f"on {case.what}")
            or _snapshot_keys(mine, model, case.what)
        )
        for name, param in params.items():
            verdict = verdict or _not_a_copy(
                mine[name], param, f"on {case.what}, your snapshot of {name}"
            )
        if verdict is not None:
            return verdict
        case.train(model)
        for name, param in params.items():
            if not torch.equal(mine[name].detach().cpu(), before[name]):
                return _changed(mine[name], param, f"on {case.what}, your snapshot of {name}")
    return passed("a real copy: training cannot reach it, on any device.")


def _reference_snapshot():
    def snapshot(model):
        return {name: p.detach().cpu().clone() for name, p in model.named_parameters()}

    return snapshot


def _pairs(model: TopKSAE) -> list[tuple[str, torch.nn.Parameter]]:
    return list(model.named_parameters())


def _only_weights():
    def snapshot(model):
        return {n: p.detach().clone() for n, p in model.named_parameters() if "weight" in n}

    return snapshot


register(
    Exercise(
        name="01.snapshot",
        prompt="Write snapshot(model) -> dict: every parameter's name -> a tensor copy of its "
        "values that later training cannot change.",
        checker=_check_snapshot,
        hint="model.named_parameters() gives (name, parameter) pairs. A copy needs .clone(); "
        ".detach() and state_dict() share the parameter's memory.",
        reference=_reference_snapshot,
        wrong_answers=(
            lambda: lambda model: dict(model.named_parameters()),
            lambda: lambda model: model.state_dict(),
            lambda: lambda model: {n: p.detach() for n, p in model.named_parameters()},
            lambda: lambda model: {n: p.detach().cpu() for n, p in model.named_parameters()},
            lambda: lambda model: {n: p.tolist() for n, p in model.named_parameters()},
            lambda: (
                lambda model: {n: p.detach().cpu().numpy() for n, p in model.named_parameters()}
            ),
            _only_weights,
            lambda: lambda model: {n: p.detach().half() for n, p in model.named_parameters()},
            lambda: (
                lambda model: {n: p.detach().clone() for n, p in model.cpu().named_parameters()}
            ),
            lambda: lambda model: {n: p.requires_grad_(False).clone() for n, p in _pairs(model)},
            lambda: lambda model: {n: p.detach().contiguous() for n, p in _pairs(model)},
            lambda: lambda model: model.state_dict().copy(),  # a new dict, the same tensors
            lambda: lambda model: {n: p.data for n, p in _pairs(model)},
            lambda: lambda model: {n: p.detach().clone()[0] for n, p in _pairs(model)},
            lambda: lambda model: {i: p.detach().clone() for i, p in enumerate(model.parameters())},
            lambda: lambda model: copy.deepcopy(model),
            lambda: lambda model: [(n, p.detach().clone()) for n, p in _pairs(model)],
            lambda: lambda model: {n: p.detach().cpu().clone() for n, p in _pairs(fresh_model())},
            lambda: lambda model: {n: p.detach().double() for n, p in _pairs(model)},
            lambda: lambda model: {n: p.detach().cpu().numpy().copy() for n, p in _pairs(model)},
            lambda: lambda model: {n: p.detach().reshape(p.shape) for n, p in _pairs(model)},
            lambda: lambda model: {n: p.detach().flatten().clone() for n, p in _pairs(model)},
        ),
    )
)

# ---- 01.frozen_names -------------------------------------------------------------------------


def _decoder_only(profile: emps.Profile) -> Callable[[TopKSAE], None]:
    """Training that updates only the decoder (an optimizer over the decoder's parameters)."""

    def train(model: TopKSAE) -> None:
        data = dataset(d_model=model.encoder.weight.shape[1]).x[:64]
        with emps.use_profile(profile):
            x = data.to(next(model.parameters()).device)
            opt = torch.optim.Adam(model.decoder.parameters(), lr=1e-3)
            for _ in range(2):
                opt.zero_grad()
                (model(x) - x).pow(2).sum(-1).mean().backward()
                opt.step()

    return train


def _edit(change: Callable[[TopKSAE], None]) -> Callable[[TopKSAE], None]:
    """A "run" that changes a weight by hand: what only an exact comparison can see."""

    def train(model: TopKSAE) -> None:
        with torch.no_grad():
            change(model)

    return train


def _swap_two(model: TopKSAE) -> None:
    """The last two values of encoder.weight's last row trade places."""
    row = model.encoder.weight[-1]
    row[-2:] = row[-2:].flip(0).clone()


def _shift_bias(model: TopKSAE) -> None:
    """encoder.bias (zeros at init) goes up 0.5 in one place, down 0.5 in another."""
    model.encoder.bias[0] += 0.5
    model.encoder.bias[1] -= 0.5


def _nan_tail(model: TopKSAE) -> None:
    model.decoder.weight[-1, -3:] = float("nan")


def _tiny_bias(model: TopKSAE) -> None:
    """encoder.bias (zeros at init) gets the smallest normal float32, about 1e-38, in one place."""
    model.encoder.bias[0] = torch.finfo(model.encoder.bias.dtype).tiny


def _step_largest(model: TopKSAE) -> None:
    """decoder.weight's largest value moves one float32 step up: a relative change near 1e-7."""
    weight = model.decoder.weight
    where = torch.unravel_index(weight.abs().argmax(), weight.shape)
    weight[where] = torch.nextafter(weight[where], torch.tensor(float("inf")))


def _small_cpu() -> TopKSAE:
    return fresh_model(device="cpu", **SMALL)


FROZEN_CASES = (
    Case(
        "the story's profile, a smaller model",
        lambda: fresh_model(**SMALL),
        trainer(steps=3),
        "the answer must come from the run you were given",
        story=True,
    ),
    Case(
        f"a later profile ({LATER.name})",
        lambda: fresh_model(LATER),
        trainer(LATER, steps=3),
        "on this profile every weight trains: the answer must come from the run you were "
        "given, not from the story",
    ),
    Case(
        "the CPU",
        lambda: fresh_model(device="cpu", **SMALL),
        trainer(steps=3),
        "on the CPU every weight trains: the answer must come from the run you were given",
    ),
    Case(
        "the same values built another way",
        lambda: fresh_model(init="contiguous", **SMALL),
        trainer(steps=3),
        "only the run can say what moved: compare before and after",
    ),
    Case(
        "another seed",
        lambda: fresh_model(seed=11, **SMALL),
        trainer(steps=3, seed=11),
        "only the run can say what moved: compare before and after",
        story=True,
    ),
    Case(
        "a later profile with lr = 1e-8 (weights move by a float32 step or two)",
        lambda: fresh_model(LATER, **SMALL),
        trainer(LATER, steps=1, lr=1e-8),
        "close is not equal: a weight that moved by one float32 step has moved, and a summary "
        "of it (its norm, its largest value) may not change at all. Compare whole tensors "
        "exactly (torch.equal)",
        subtle=True,
    ),
    Case(
        "a run whose optimizer only holds the decoder",
        lambda: fresh_model(LATER, **SMALL),
        _decoder_only(LATER),
        "only the decoder trained, so the encoder's weight and its bias both stayed: every "
        "parameter counts, biases too",
    ),
    Case(
        "a run that swapped two values in the last row of encoder.weight",
        _small_cpu,
        _edit(_swap_two),
        "the same values in other places are another tensor: a sum, sorted values or the "
        "first elements cannot see that. Compare whole tensors (torch.equal)",
        subtle=True,
    ),
    Case(
        "a run that moved encoder.bias up by 0.5 in one place and down by 0.5 in another",
        _small_cpu,
        _edit(_shift_bias),
        "its sum and its mean stayed exactly the same, its values did not. Compare whole "
        "tensors (torch.equal)",
        subtle=True,
    ),
    Case(
        "a run that diverged: NaN at the end of decoder.weight",
        _small_cpu,
        _edit(_nan_tail),
        "NaN equals nothing, itself included: a weight that turned NaN has moved. A test for "
        "'no difference above 0' reads NaN as unchanged; torch.equal does not",
        subtle=True,
    ),
    Case(
        "a run that moved one value of encoder.bias from 0 to about 1e-38",
        _small_cpu,
        _edit(_tiny_bias),
        "a value that moved by 1e-38 has moved: any tolerance, however small, reads it as "
        "still, and so does a squared difference (1e-38 squared rounds to 0 in float32). "
        "Compare exactly (torch.equal)",
        subtle=True,
    ),
    Case(
        "a run that moved decoder.weight's largest value by one float32 step",
        _small_cpu,
        _edit(_step_largest),
        "one float32 step is a relative change of about 1e-7, so a relative tolerance "
        "(rtol) reads it as still: moved is moved. Compare exactly (torch.equal)",
        subtle=True,
    ),
)


@functools.cache
def _expected_frozen(index: int) -> tuple[str, ...]:
    case = FROZEN_CASES[index]
    return tuple(sorted(frozen_names(case.make(), case.train)))


class _NothingToRead:
    """What train(model) returns in a hidden run: nothing; the model itself holds the answer.

    The course's trainer() returns a History whose `.frozen` is this exercise's answer, computed
    by the course: a function that reads it would pass without comparing anything."""

    def __getattr__(self, name: str) -> NoReturn:
        raise CourseError(
            f"train(model) returns nothing to read here (your function asked for its .{name}): "
            "it trains the model in place, and the answer must come from the model's "
            "parameters, compared before and after"
        )


def _counted(train: Callable[[TopKSAE], object], calls: list[int]) -> Callable:
    def counted_train(model: TopKSAE) -> _NothingToRead:
        calls.append(1)
        train(model)
        return _NothingToRead()

    return counted_train


def _names_given(got: object, what: str) -> Verdict | None:
    if isinstance(got, (list, tuple, set)) and all(isinstance(n, str) for n in got):
        return None
    kinds = (
        f"a {type(got).__name__} of {', '.join(sorted({type(n).__name__ for n in got}))}"
        if isinstance(got, (list, tuple, set)) and got
        else repr(got)[:80]
    )
    return failed(
        f"return a list of parameter names (strings, as named_parameters() names them); on "
        f"{what} you returned {kinds}"
    )


def _train_calls(calls: int, what: str) -> Verdict | None:
    if calls == 1:
        return None
    if calls == 0:
        return failed(
            f"on {what}, your function never called train(model): the answer must come from "
            "the run you were given. Keep a copy, call train(model) once, then compare"
        )
    return failed(
        f"on {what}, your function called train {calls} times: call it once, between the "
        "copy before and the comparison after"
    )


def _trained_given(model: TopKSAE, then: Layout, before: dict, want: list[str], what: str):
    """Why the model handed to the learner's function is not the one that trained, if it is not.

    Training a copy (or a fresh model) can name the right tensors, but leaves the caller's
    model untrained: the pair that 01.frozen checks would then be a model that never ran."""
    verdict = _left_alone(model, then, f"on {what}")
    if verdict is not None:
        return verdict
    if set(want) != set(before) and not _moved(model, before):
        return failed(
            f"on {what}, the model your function was given is still at its starting values: "
            "train(model) must train that model, in place, not a copy or another one"
        )
    return None


def _frozen_miss(got: list[str], want: list[str], names: list[str], case: Case) -> Verdict:
    """Why the names are wrong: views, the inverse, a frozen tensor left out, or the case's own
    reason (a tolerance, a partial comparison, NaN) for a moved tensor read as frozen."""
    missing = sorted(set(want) - set(got))
    if not case.subtle and got == sorted(names):
        cause = (
            "every parameter reads as frozen, even those that trained: the values you compare "
            "with are the trained ones. Either they were taken after train(model), or they "
            "changed with the model (state_dict() and .detach() share the parameters' memory). "
            "Keep a copy (.clone()) before calling train(model)"
        )
    elif want and got == sorted(set(names) - set(want)):
        cause = "those are the parameters that moved: the question is which did not"
    elif missing and set(got) <= set(want):
        which = _how_many(missing) if case.story else str(missing)
        cause = (
            f"your list misses {which}, bitwise equal to its value before training: every "
            "parameter counts, biases too, each compared whole (torch.equal)"
        )
    else:
        cause = case.why
    shown = "not shown: it is what 01.frozen measures next" if case.story else want
    return failed(
        f"on {case.what}, not the parameters left bitwise equal to their initial values: {cause}",
        got,
        shown,
    )


def _check_frozen_names(fn: Callable) -> Verdict:
    for index, case in enumerate(FROZEN_CASES):
        calls: list[int] = []
        model = case.make()
        then, before = _layout(model), _values(model)
        got = fn(model, _counted(case.train, calls))
        want = list(_expected_frozen(index))
        verdict = (
            _names_given(got, case.what)
            or _train_calls(len(calls), case.what)
            or _trained_given(model, then, before, want, case.what)
        )
        if verdict is not None:
            return verdict
        if sorted(got) != want:
            return _frozen_miss(sorted(got), want, _names(model), case)
    return passed(
        "your check follows the run: on every hidden run it names exactly the tensors left "
        "bitwise unchanged, and no others. Now measure the story's own run with it."
    )


def _reference_frozen_names():
    def frozen_names(model, train):
        before = {n: p.detach().cpu().clone() for n, p in model.named_parameters()}
        train(model)
        after = {n: p.detach().cpu() for n, p in model.named_parameters()}
        return [n for n in before if torch.equal(before[n], after[n])]

    return frozen_names


# the notebook's name for it, so the references (and solution(...)) read as its cells
frozen_names = _reference_frozen_names()


def _frozen_by(
    same: Callable,
    cloned: bool = True,
    weights_only: bool = False,
    encoder_only: bool = False,
    tensors: bool = False,
):
    """A learner's frozen_names that compares with `same`; without `cloned` it keeps views, with
    `weights_only` or `encoder_only` it looks at some parameters only, with `tensors` it returns
    the parameters themselves instead of their names."""

    def frozen_names(model, train):
        if cloned:
            before = {n: p.detach().cpu().clone() for n, p in model.named_parameters()}
        else:
            before = model.state_dict()
        train(model)
        after = dict(model.named_parameters())
        names = [
            n
            for n in before
            if ("weight" in n or not weights_only) and (n.startswith("encoder") or not encoder_only)
        ]
        frozen = [n for n in names if same(before[n].cpu(), after[n].detach().cpu())]
        return [after[n] for n in frozen] if tensors else frozen

    return frozen_names


def _on_a_copy():
    def frozen_names(model, train):
        trained = copy.deepcopy(model)  # "so that the model I was given stays as it was"
        train(trained)
        return [
            n
            for (n, p), (_, q) in zip(_pairs(model), _pairs(trained), strict=True)
            if torch.equal(p, q)
        ]

    return frozen_names


def _by_gradients():
    def frozen_names(model, train):
        train(model)
        return [n for n, p in model.named_parameters() if p.grad is None or not p.grad.any()]

    return frozen_names


def _on_the_cpu():
    def frozen_names(model, train):
        before = {n: p.detach().clone() for n, p in model.cpu().named_parameters()}  # moves it
        train(model)
        return [n for n, p in model.named_parameters() if torch.equal(before[n], p.detach())]

    return frozen_names


def _snapshot_after_training():
    def frozen_names(model, train):
        train(model)
        before = {n: p.detach().cpu().clone() for n, p in model.named_parameters()}  # too late
        after = {n: p.detach().cpu().clone() for n, p in model.named_parameters()}
        return [n for n in before if torch.equal(before[n], after[n])]

    return frozen_names


def _without_training():
    def frozen_names(model, train):
        before = {n: p.detach().cpu().clone() for n, p in model.named_parameters()}
        after = {n: p.detach().cpu() for n, p in model.named_parameters()}  # train() forgotten
        return [n for n in before if torch.equal(before[n], after[n])]

    return frozen_names


register(
    Exercise(
        name="01.frozen_names",
        prompt="Write frozen_names(model, train) -> list of the parameter names that "
        "`train(model)` left bitwise equal to their values before training.",
        checker=_check_frozen_names,
        hint="Take a snapshot (a copy!) before train(model), then compare each parameter with "
        "torch.equal: 'frozen' means equal to the last bit, not 'close'.",
        reference=_reference_frozen_names,
        wrong_answers=(
            lambda: _frozen_by(torch.allclose),
            lambda: _frozen_by(torch.equal, cloned=False),
            lambda: _frozen_by(lambda a, b: (a - b).abs().max().item() < 1e-6),
            lambda: lambda model, train: ["encoder.weight"],
            lambda: _frozen_by(lambda a, b: bool(a.flatten()[0] == b.flatten()[0])),
            lambda: _frozen_by(lambda a, b: torch.equal(*(t.flatten().sort()[0] for t in (a, b)))),
            lambda: _frozen_by(lambda a, b: bool(a.sum() == b.sum())),
            lambda: _frozen_by(lambda a, b: not bool(((a - b).abs() > 0).any())),
            lambda: _frozen_by(torch.equal, weights_only=True),
            _without_training,
            lambda: _frozen_by(lambda a, b: not torch.equal(a, b)),
            lambda: _frozen_by(lambda a, b: (a - b).abs().max().item() < 1e-12),
            lambda: _frozen_by(lambda a, b: torch.allclose(a, b, rtol=1e-6, atol=0)),
            lambda: _frozen_by(lambda a, b: bool(a.norm() == b.norm())),
            lambda: _frozen_by(lambda a, b: (a == b).float().mean().item() > 0.99),
            lambda: lambda model, train: [n for n, still in train(model).frozen.items() if still],
            _on_a_copy,
            _by_gradients,
            lambda: _frozen_by(torch.equal, weights_only=True, encoder_only=True),
            lambda: _frozen_by(torch.equal, tensors=True),
            _on_the_cpu,
            _snapshot_after_training,
            lambda: _frozen_by(lambda a, b: (a - b).pow(2).sum().item() == 0),
            lambda: _frozen_by(lambda a, b: torch.equal(a.half(), b.half())),
            lambda: _frozen_by(lambda a, b: a.mean().item() == b.mean().item()),
        ),
    )
)

# ---- 01.frozen: the names the text builds on ---------------------------------------------------


@functools.cache
def _story_start() -> tuple[dict[str, torch.Tensor], tuple[int, ...]]:
    """fresh_model()'s starting values, and its encoder weight's strides."""
    model = fresh_model()
    return _values(model), model.encoder.weight.stride()


def _story_model(model: TopKSAE) -> Verdict | None:
    """The story's model, fresh_model() as it comes: on the emulated device, its sizes."""
    start, strides = _story_start()
    where = next(model.parameters()).device.type
    if where != "emps":
        return failed(
            f"your model lives on {where}: the run the text builds on is the story's, on the "
            "emulated device (fresh_model() as it comes)",
            where,
            "emps",
        )
    shapes = {n: list(p.shape) for n, p in model.named_parameters()}
    if shapes != {n: list(t.shape) for n, t in start.items()}:
        return failed(
            "your model has other sizes than the story's: measure fresh_model() as it comes",
            shapes,
        )
    if model.encoder.weight.stride() != strides:
        return failed(
            "your model was built with another init than the story's: measure fresh_model() "
            "as it comes"
        )
    return None


STORY_STEPS = 30  # trainer(steps=30), as 01.frozen's prompt names it
AS_THE_RUN = 5e-3  # of what training moved each tensor: thread counts differ by ~1e-6 of it


@functools.cache
def _story_end() -> dict[str, torch.Tensor]:
    """fresh_model()'s values after trainer(steps=30): where the story's run takes them."""
    model = fresh_model()
    with pinned_threads(1):
        trainer(steps=STORY_STEPS)(model)
    return _values(model)


def _off_the_run(now: dict[str, torch.Tensor]) -> bool:
    """Whether a trained tensor in `now` is not where trainer(steps=30) takes it.

    Another thread count rounds each step's sums in another order, which moves the result by
    about a millionth of what training moved it; one step more or less, or a learning rate 1%
    off, moves it by a hundredth or more."""
    start, end = _story_start()[0], _story_end()
    return any(
        (now[n] - there).norm().item() > AS_THE_RUN * (there - start[n]).norm().item()
        for n, there in end.items()
    )


def _frozen_given(frozen: object, names: list[str]) -> Verdict | None:
    if isinstance(frozen, int) and not isinstance(frozen, bool):
        return failed("frozen is a count: give the names (a list of parameter names)", frozen)
    if isinstance(frozen, str):
        return failed("frozen is one string: give a list of names (a list, even of one)", frozen)
    if not isinstance(frozen, (list, tuple, set)) or not all(isinstance(n, str) for n in frozen):
        return failed("frozen must be a list of parameter names", type(frozen).__name__)
    unknown = sorted(set(frozen) - set(names))
    if unknown:
        return failed(f"{unknown} are not parameter names of the model", unknown, names)
    return None


def _how_many(names: list[str]) -> str:
    """A count, not the names: the names left out are the answer being measured."""
    return "a parameter" if len(names) == 1 else f"{len(names)} parameters"


def _check_frozen(answer: object) -> Verdict:
    if not (isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], TopKSAE)):
        return failed(
            "give the pair (model, frozen): the model your frozen_names trained, then the "
            "names it found",
            type(answer).__name__,
            "(model, list of names)",
        )
    model, frozen = answer
    start, _ = _story_start()
    verdict = _frozen_given(frozen, list(start)) or _story_model(model)
    if verdict is not None:
        return verdict
    now = _values(model)
    unchanged = sorted(n for n in start if torch.equal(start[n], now[n]))
    if unchanged == sorted(start):
        return failed(
            "your model is still at its starting values: it never trained. Your frozen_names "
            "must train the model it is given (train(model), not a copy of it), and you hand "
            "over that model: model = fresh_model(), then frozen = frozen_names(model, "
            "trainer(steps=30))"
        )
    if not unchanged:
        return failed(
            "no parameter of your model is still at fresh_model()'s starting values: it "
            "started elsewhere (another seed) or trained where every weight moves (another "
            "profile, the CPU, another optimizer such as SGD). The run the text builds on is "
            "fresh_model() trained by trainer(steps=30), both as they come"
        )
    moved = sorted(set(frozen) - set(unchanged))
    kept = sorted(set(unchanged) - set(frozen))
    if moved or kept:
        parts = [f"lists {moved}, which moved on your model"] if moved else []
        parts += [f"misses {_how_many(kept)} still bitwise at its starting value"] if kept else []
        return failed(
            f"your frozen {' and '.join(parts)}: check your frozen_names first "
            "(check('01.frozen_names', frozen_names))",
            sorted(frozen),
        )
    if _off_the_run(now):
        return failed(
            "your model's trained weights are not where trainer(steps=30) takes fresh_model(): "
            "it ran another number of steps, another learning rate, batch size or seed, or "
            "trained again after your frozen_names (a second call, a rerun cell). Its frozen "
            "names may match, but the text builds on the story's run as it comes: model = "
            "fresh_model(), then frozen = frozen_names(model, trainer(steps=30)), once"
        )
    return passed(
        f"measured on the story's run: {unchanged} bitwise unchanged after training, while "
        "the rest trained."
    )


def _reference_frozen():
    model = fresh_model()
    frozen = frozen_names(model, trainer(steps=30))
    return model, frozen


def _measured(
    model: TopKSAE, measure: Callable = frozen_names, profile: emps.Profile | None = None, **kw
):
    """A wrong answer: `model` trained for 2 steps (on `profile`), and what `measure` finds."""
    return model, measure(model, trainer(profile or emps.DEFAULT_PROFILE, steps=2, **kw))


def _trained_on_the_cpu_and_loaded():
    model, on_cpu = fresh_model(), fresh_model(device="cpu")
    frozen = frozen_names(on_cpu, trainer(steps=2))
    model.load_state_dict(on_cpu.state_dict())  # back on emps, with the CPU run's values
    return model, frozen


def _trained_twice():
    """The cell's run, then one more call of the same training (a cell run again, say)."""
    model, frozen = _measured(fresh_model())
    trainer(steps=2)(model)
    return model, frozen


def _story_run_reported_as(frozen: object):
    model = fresh_model()
    trainer(steps=2)(model)
    return model, frozen


register(
    Exercise(
        name="01.frozen",
        prompt="Measure the story's run: model = fresh_model(), frozen = frozen_names(model, "
        "trainer(steps=30)); check the pair (model, frozen).",
        checker=_check_frozen,
        hint="Train fresh_model() as it comes, on the story's profile, with your frozen_names "
        "(which calls train(model) itself), and hand over that same model with its names.",
        reference=_reference_frozen,
        wrong_answers=(
            lambda: (fresh_model(), ["encoder.weight"]),
            lambda: _measured(fresh_model(device="cpu")),
            lambda: _measured(fresh_model(LATER), profile=LATER),
            lambda: _measured(fresh_model(init="contiguous")),
            lambda: _measured(fresh_model(seed=1), seed=1),
            lambda: _measured(fresh_model(), _frozen_by(torch.equal, cloned=False)),
            lambda: _story_run_reported_as(1),
            lambda: _story_run_reported_as("encoder.weight"),
            lambda: tuple(reversed(_measured(fresh_model()))),
            lambda: _story_run_reported_as([]),
            lambda: _story_run_reported_as(["encoder"]),
            lambda: _measured(fresh_model(), _on_a_copy()),
            lambda: _measured(fresh_model(), optimizer="sgd"),
            lambda: _measured(fresh_model(), _on_the_cpu()),
            lambda: _measured(fresh_model(**SMALL)),
            lambda: _story_run_reported_as(list(dict(_pairs(fresh_model())).values())[:1]),
            lambda: _story_run_reported_as({"encoder.weight": True, "decoder.weight": False}),
            _trained_on_the_cpu_and_loaded,
            lambda: [*_measured(fresh_model())],
            lambda: _measured(fresh_model(), _by_gradients()),
            lambda: _measured(fresh_model())[0],
            lambda: _measured(fresh_model()),  # trainer(steps=2): the same names, another run
            lambda: _measured(fresh_model(), lr=1e-2),  # another learning rate
            _trained_twice,
        ),
    )
)

# ---- prediction ------------------------------------------------------------------------------


def _count_frozen() -> str:
    frozen = frozen_names(fresh_model(), trainer(steps=5))
    return str(len(frozen))


register_prediction(
    Prediction(
        "01.how_many_frozen",
        "The story's model has four parameter tensors (encoder and decoder, weight and bias). "
        "After training with a stalled loss, how many are still bitwise equal to their "
        "initial values?",
        ("0", "1", "2", "4"),
        _count_frozen,
        "One: encoder.weight, to the last bit, while its own bias and the whole decoder train. "
        "Not a learning-rate problem: no learning rate leaves a weight exactly where it was.",
        answer_words=("exactly one", "only one", "one tensor", "a single tensor"),
    )
)
