"""Notebook 01's exercises and prediction, checked by running the learner's function elsewhere.

The learner writes the three measurements of the story's first step: how low the loss could go
(so "8" is a plateau, not a good model), a snapshot of the weights that training cannot change,
and the check of which weights never moved. Each checker runs the learner's function on data,
models and training runs they never see: other seeds and sizes, a later profile, the CPU.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from course import emps
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    passed,
    register,
    register_prediction,
)
from course.model.data import SyntheticData, make_data
from course.model.runs import dataset, fresh_model, trainer
from course.model.sae import TopKSAE

LATER = emps.FIXED_MACOS14  # a profile without the story's bug, for hidden runs

SMALL = {"d_model": 64, "n_features": 256, "k": 8}


# ---- 01.loss_floor ---------------------------------------------------------------------------


def _floor_cases() -> dict[str, SyntheticData]:
    return {
        "the course's data": dataset(),
        "data with 64 dimensions and 10x the noise": make_data(512, 64, 128, 4, 0.1, seed=2),
        "data without noise": make_data(256, 32, 64, 3, 0.0, seed=3),
        "data with 3 active features of 48 and noise 0.05": make_data(512, 96, 48, 3, 0.05, 4),
    }


def _check_loss_floor(fn: Callable) -> Verdict:
    reference = _reference_loss_floor()
    for what, data in _floor_cases().items():
        got = fn(data)
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            return failed(
                f"return a number (use .item()); for {what} you returned {type(got).__name__}",
                type(got).__name__,
                "float",
            )
        want = reference(data)
        if abs(got - want) > 1e-4 * want + 1e-9:
            return failed(
                f"not the loss a perfect model reaches on {what}: the training loss is the "
                "squared error summed over a sample's dimensions, averaged over samples",
                f"{got:.6g}",
                f"{want:.6g}",
            )
    return passed(
        "a model that knew the true features would only miss the noise. Compare that floor "
        "with the loss the run stalls at."
    )


def _reference_loss_floor():
    def best_possible_loss(data):
        perfect = data.codes @ data.features  # every sample rebuilt from its true features
        return (data.x - perfect).pow(2).sum(-1).mean().item()

    return best_possible_loss


def _floor_per_element():
    def best_possible_loss(data):
        return (data.x - data.codes @ data.features).pow(2).mean().item()

    return best_possible_loss


def _floor_of_a_zero_model():
    def best_possible_loss(data):
        return data.x.pow(2).sum(-1).mean().item()

    return best_possible_loss


def _floor_not_squared():
    def best_possible_loss(data):
        return (data.x - data.codes @ data.features).norm(dim=-1).mean().item()

    return best_possible_loss


register(
    Exercise(
        name="01.loss_floor",
        prompt="Write best_possible_loss(data) -> float: the training loss of a model that "
        "rebuilds every sample exactly from its true features (data.codes @ data.features).",
        checker=_check_loss_floor,
        hint="The training loss is (reconstruction - x).pow(2).sum(-1).mean(): squared error "
        "summed over each sample's dimensions, then averaged over samples.",
        reference=_reference_loss_floor,
        wrong_answers=(
            _floor_per_element,
            _floor_of_a_zero_model,
            _floor_not_squared,
            lambda: lambda data: 0.0384,
        ),
    )
)

# ---- 01.snapshot -----------------------------------------------------------------------------

# (what, model maker, training that moves every parameter, why it matters)
SNAPSHOT_CASES = (
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


def _names(model: TopKSAE) -> list[str]:
    return [name for name, _ in model.named_parameters()]


def _check_snapshot(fn: Callable) -> Verdict:
    for what, make, train in SNAPSHOT_CASES:
        model = make()
        mine = fn(model)
        truth = {n: p.detach().cpu().clone() for n, p in model.named_parameters()}
        if not isinstance(mine, dict) or sorted(mine) != sorted(_names(model)):
            keys = sorted(mine) if isinstance(mine, dict) else type(mine).__name__
            return failed(
                f"return a dict from every parameter name to its values ({what})",
                keys,
                sorted(_names(model)),
            )
        train(model)
        for name, values in mine.items():
            if not isinstance(values, torch.Tensor) or not torch.equal(values.cpu(), truth[name]):
                return failed(
                    f"on {what}, your snapshot of {name} changed when the model trained: it "
                    "shares memory with the parameter (state_dict(), .detach() and .data are "
                    "views of the same storage, and on the CPU .cpu() returns the tensor "
                    "itself). A snapshot must be a copy.",
                    "changed with training",
                    "the values before training",
                )
    return passed("a real copy: training cannot reach it, on any device.")


def _reference_snapshot():
    def snapshot(model):
        return {name: p.detach().cpu().clone() for name, p in model.named_parameters()}

    return snapshot


register(
    Exercise(
        name="01.snapshot",
        prompt="Write snapshot(model) -> dict: every parameter's name -> a copy of its values "
        "that later training cannot change.",
        checker=_check_snapshot,
        hint="model.named_parameters() gives (name, parameter) pairs. A copy needs .clone(); "
        ".detach() and state_dict() share the parameter's memory.",
        reference=_reference_snapshot,
        wrong_answers=(
            lambda: lambda model: dict(model.named_parameters()),
            lambda: lambda model: model.state_dict(),
            lambda: lambda model: {n: p.detach() for n, p in model.named_parameters()},
            lambda: lambda model: {n: p.detach().cpu() for n, p in model.named_parameters()},
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


FROZEN_CASES = (
    ("the story's profile, a smaller model", lambda: fresh_model(**SMALL), trainer(steps=3)),
    (
        f"a later profile ({LATER.name})",
        lambda: fresh_model(LATER),
        trainer(LATER, steps=3),
    ),
    ("the CPU", lambda: fresh_model(device="cpu", **SMALL), trainer(steps=3)),
    (
        "the same values initialised another way",
        lambda: fresh_model(init="contiguous", **SMALL),
        trainer(steps=3),
    ),
    ("another seed", lambda: fresh_model(seed=11, **SMALL), trainer(steps=3, seed=11)),
    (
        "a later profile with lr = 1e-8 (weights move by at most a float32 step or two)",
        lambda: fresh_model(LATER, **SMALL),
        trainer(LATER, steps=1, lr=1e-8),
    ),
    (
        "a run whose optimizer only holds the decoder",
        lambda: fresh_model(LATER, **SMALL),
        _decoder_only(LATER),
    ),
)


@functools.cache
def _expected_frozen(index: int) -> tuple[str, ...]:
    _what, make, train = FROZEN_CASES[index]
    return tuple(sorted(_reference_frozen_names()(make(), train)))


def _check_frozen_names(fn: Callable) -> Verdict:
    for index, (what, make, train) in enumerate(FROZEN_CASES):
        got = fn(make(), train)
        if not isinstance(got, (list, tuple, set)) or not all(isinstance(n, str) for n in got):
            return failed(f"return a list of parameter names; on {what} you returned {got!r}")
        want = list(_expected_frozen(index))
        if sorted(got) != want:
            return failed(
                f"on {what}, not the parameters left bitwise equal to their initial values. "
                "The answer must come from the run you were given: compare a copy taken "
                "before training with the values after, exactly",
                sorted(got),
                want,
            )
    return passed(
        "your check follows the run: on the story's profile exactly one tensor, encoder.weight, "
        "is bitwise unchanged, while its own bias and the decoder train."
    )


def _reference_frozen_names():
    def frozen_names(model, train):
        before = {n: p.detach().cpu().clone() for n, p in model.named_parameters()}
        train(model)
        after = {n: p.detach().cpu() for n, p in model.named_parameters()}
        return [n for n in before if torch.equal(before[n], after[n])]

    return frozen_names


def _frozen_by(compare: Callable, copy: bool = True):
    def frozen_names(model, train):
        if copy:
            before = {n: p.detach().cpu().clone() for n, p in model.named_parameters()}
        else:
            before = model.state_dict()
        train(model)
        after = dict(model.named_parameters())
        return [n for n in before if compare(before[n].cpu(), after[n].detach().cpu())]

    return frozen_names


register(
    Exercise(
        name="01.frozen_names",
        prompt="Write frozen_names(model, train) -> list of the parameter names that "
        "`train(model)` "
        "left bitwise equal to their values before training.",
        checker=_check_frozen_names,
        hint="Take a snapshot (a copy!) before train(model), then compare each parameter with "
        "torch.equal: 'frozen' means equal to the last bit, not 'close'.",
        reference=_reference_frozen_names,
        wrong_answers=(
            lambda: _frozen_by(torch.allclose),
            lambda: _frozen_by(torch.equal, copy=False),
            lambda: _frozen_by(lambda a, b: (a - b).abs().max().item() < 1e-6),
            lambda: lambda model, train: ["encoder.weight"],
        ),
    )
)

# ---- prediction ------------------------------------------------------------------------------


def _count_frozen() -> str:
    frozen = _reference_frozen_names()(fresh_model(), trainer(steps=5))
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
    )
)
