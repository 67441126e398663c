"""01.frozen_names and 01.frozen as test data: the notebook's comparison and measurement, other
right comparisons, and the ones that miss (a tolerance, a summary, views, another run), keyed by
their flaw with the words their feedback must hold."""

from __future__ import annotations

import copy
import functools

import numpy as np
import torch

from course import emps
from course.model.runs import fresh_model, trainer
from tests.corpus import Corpus
from tests.story.exercises.corpus_snapshot import pairs, snapshot

LATER = emps.FIXED_MACOS14  # a profile without the story's bug
SMALL = {"d_model": 64, "n_features": 256, "k": 8}


def _frozen_names():
    def frozen_names(model, train):
        before = snapshot(model)
        train(model)
        after = snapshot(model)
        return [name for name in before if torch.equal(before[name], after[name])]

    return frozen_names


frozen_names = _frozen_names()  # the notebook's name, which 01.frozen's answer calls


def frozen_by(
    same,
    cloned: bool = True,
    weights_only: bool = False,
    encoder_only: bool = False,
    tensors: bool = False,
):
    """A learner's frozen_names that compares with `same`; without `cloned` it keeps views, with
    `weights_only` or `encoder_only` it looks at some parameters only, with `tensors` it returns
    the parameters themselves instead of their names."""

    def frozen_names(model, train):
        before = snapshot(model) if cloned else model.state_dict()
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


def on_a_copy():
    def frozen_names(model, train):
        trained = copy.deepcopy(model)  # "so that the model I was given stays as it was"
        train(trained)
        return [
            n
            for (n, p), (_, q) in zip(pairs(model), pairs(trained), strict=True)
            if torch.equal(p, q)
        ]

    return frozen_names


def by_gradients():
    """No gradient means frozen: the story's encoder weight has one, so it is missed."""

    def frozen_names(model, train):
        train(model)
        return [n for n, p in model.named_parameters() if p.grad is None or not p.grad.any()]

    return frozen_names


def on_the_cpu():
    def frozen_names(model, train):
        before = {n: p.detach().clone() for n, p in model.cpu().named_parameters()}  # moves it
        train(model)
        return [n for n, p in model.named_parameters() if torch.equal(before[n], p.detach())]

    return frozen_names


def _snapshot_after_training():
    def frozen_names(model, train):
        train(model)
        before = snapshot(model)  # too late
        after = snapshot(model)
        return [n for n in before if torch.equal(before[n], after[n])]

    return frozen_names


def _without_training():
    def frozen_names(model, train):
        before = snapshot(model)
        after = snapshot(model)  # train() forgotten
        return [n for n in before if torch.equal(before[n], after[n])]

    return frozen_names


def frozen_by_loop(model, train):
    """A right frozen_names written as a loop over NumPy copies."""
    names, before = [], []
    for name, param in model.named_parameters():
        names.append(name)
        before.append(param.detach().cpu().numpy().copy())
    train(model)
    after = [p.detach().cpu().numpy() for p in model.parameters()]
    return [n for n, b, a in zip(names, before, after, strict=True) if np.array_equal(b, a)]


def _frozen_on_the_device(model, train):
    before = {n: p.clone() for n, p in model.named_parameters()}  # stays on emps, keeps grad
    train(model)
    return {n for n, p in model.named_parameters() if bool((p == before[n]).all())}


def _close(**tolerance):
    return lambda: frozen_by(lambda a, b: torch.allclose(a, b, **tolerance))


FROZEN_NAMES = Corpus(
    "01.frozen_names",
    _frozen_names,
    wrong={
        "torch.allclose": (_close(), "close is not equal"),
        "state_dict() kept as before": (
            lambda: frozen_by(torch.equal, cloned=False),
            "Keep a copy",
        ),
        "max difference < 1e-6": (
            lambda: frozen_by(lambda a, b: (a - b).abs().max().item() < 1e-6),
            "close is not equal",
        ),
        "the story's answer typed in": (
            lambda: lambda model, train: ["encoder.weight"],
            "must come from the run you were given",
        ),
        "first elements": (
            lambda: frozen_by(lambda a, b: bool(a.flatten()[0] == b.flatten()[0])),
            "the first elements",
        ),
        "sorted values": (
            lambda: frozen_by(lambda a, b: torch.equal(*(t.flatten().sort()[0] for t in (a, b)))),
            "sorted values",
        ),
        "sums": (lambda: frozen_by(lambda a, b: bool(a.sum() == b.sum())), "a sum"),
        "no difference above 0": (
            lambda: frozen_by(lambda a, b: not bool(((a - b).abs() > 0).any())),
            "NaN",
        ),
        "weights only": (lambda: frozen_by(torch.equal, weights_only=True), "biases too"),
        "train forgotten": (_without_training, "never called train(model)"),
        "the inverse": (
            lambda: frozen_by(lambda a, b: not torch.equal(a, b)),
            "the parameters that moved",
        ),
        "max difference < 1e-12": (
            lambda: frozen_by(lambda a, b: (a - b).abs().max().item() < 1e-12),
            "any tolerance, however small",
        ),
        "a relative tolerance": (_close(rtol=1e-6, atol=0), "a relative tolerance"),
        "norms": (lambda: frozen_by(lambda a, b: bool(a.norm() == b.norm())), "a summary"),
        "99% of the values equal": (
            lambda: frozen_by(lambda a, b: (a == b).float().mean().item() > 0.99),
            "Compare whole tensors",
        ),
        "the course's History.frozen": (
            lambda: lambda model, train: [n for n, still in train(model).frozen.items() if still],
            "returns nothing to read",
        ),
        "trains a deep copy": (on_a_copy, "still at its starting values"),
        "no gradient means frozen": (by_gradients, "misses a parameter"),
        "the encoder's weight only": (
            lambda: frozen_by(torch.equal, weights_only=True, encoder_only=True),
            "misses ['encoder.bias']",
        ),
        "the parameters, not their names": (
            lambda: frozen_by(torch.equal, tensors=True),
            "list of parameter names",
        ),
        "the model moved to the CPU": (on_the_cpu, "moved the model to cpu"),
        "before taken after training": (_snapshot_after_training, "taken after train(model)"),
        "a squared difference": (  # 1e-38 squared underflows
            lambda: frozen_by(lambda a, b: (a - b).pow(2).sum().item() == 0),
            "a squared difference",
        ),
        "compared in float16": (
            lambda: frozen_by(lambda a, b: torch.equal(a.half(), b.half())),
            "close is not equal",
        ),
        "means": (
            lambda: frozen_by(lambda a, b: a.mean().item() == b.mean().item()),
            "a sum",
        ),
        "a count": (lambda: lambda model, train: 1, "list of parameter names"),
    },
    right={
        "a loop over NumPy copies": lambda: frozen_by_loop,
        "copies kept on the device": lambda: _frozen_on_the_device,
        "max difference == 0": lambda: frozen_by(lambda a, b: (a - b).abs().max().item() == 0),
        "bytes compared": lambda: frozen_by(
            lambda a, b: a.numpy().tobytes() == b.numpy().tobytes()
        ),
        "a tuple": lambda: lambda model, train: tuple(frozen_names(model, train)),
    },
)


def _frozen():
    model = fresh_model()
    frozen = frozen_names(model, trainer(steps=30))
    return model, frozen


def measured(model, measure=frozen_names, profile=None, **options):
    """A wrong answer: `model` trained for 2 steps (on `profile`), and what `measure` finds."""
    return model, measure(model, trainer(profile or emps.DEFAULT_PROFILE, steps=2, **options))


# The runs several answers hand over, each done once; answers take a copy (_copy_of).
@functools.cache
def _story_run():
    return _frozen()


@functools.cache
def _two_steps():
    return measured(fresh_model())


@functools.cache
def _two_steps_unmeasured():
    model = fresh_model()
    trainer(steps=2)(model)
    return model


def _copy_of(run):
    """A deep copy of what `run` gave (its model on the same device, with the same strides and
    values): no answer and no check can change what the next answer is handed."""
    return copy.deepcopy(run())


def _trained_on_the_cpu_and_loaded():
    model, on_cpu = fresh_model(), fresh_model(device="cpu")
    frozen = frozen_names(on_cpu, trainer(steps=2))
    model.load_state_dict(on_cpu.state_dict())  # back on emps, with the CPU run's values
    return model, frozen


def _trained_twice():
    """The cell's run, then one more call of the same training (a cell run again, say)."""
    model, frozen = _copy_of(_two_steps)
    trainer(steps=2)(model)
    return model, frozen


def _story_run_reported_as(frozen):
    """The story's model, trained, handed over with `frozen` as its names."""

    def answer():
        return _copy_of(_two_steps_unmeasured), frozen

    return answer


def _frozen_inline():
    """The comparison written out in the cell, without the learner's frozen_names."""
    model = fresh_model()
    before = {name: p.detach().cpu().clone() for name, p in model.named_parameters()}
    trainer(steps=30)(model)
    after = dict(model.named_parameters())
    return model, [n for n, b in before.items() if torch.equal(b, after[n].detach().cpu())]


def _frozen_as(kind):
    """The notebook's measurement, with the names handed over as another collection."""

    def answer():
        model, frozen = _copy_of(_story_run)
        return model, kind(frozen)

    return answer


FROZEN = Corpus(
    "01.frozen",
    _frozen,
    wrong={
        "an untrained model, names typed in": (
            lambda: (fresh_model(), ["encoder.weight"]),
            "never trained",
        ),
        "the run on the CPU": (lambda: measured(fresh_model(device="cpu")), "lives on cpu"),
        "a later profile": (
            lambda: measured(fresh_model(LATER), profile=LATER),
            "another profile",
        ),
        "another init": (lambda: measured(fresh_model(init="contiguous")), "another init"),
        "another seed": (lambda: measured(fresh_model(seed=1), seed=1), "another seed"),
        "an aliased frozen_names": (
            lambda: measured(fresh_model(), frozen_by(torch.equal, cloned=False)),
            "which moved on your model",
        ),
        "a count": (_story_run_reported_as(1), "a count"),
        "one string": (_story_run_reported_as("encoder.weight"), "one string"),
        "the pair reversed": (
            lambda: tuple(reversed(_copy_of(_two_steps))),
            "the pair (model, frozen)",
        ),
        "no names": (_story_run_reported_as([]), "misses"),
        "a module's name": (_story_run_reported_as(["encoder"]), "not parameter names"),
        "a frozen_names that trains a copy": (
            lambda: measured(fresh_model(), on_a_copy()),
            "not a copy of it",
        ),
        "SGD": (
            lambda: measured(fresh_model(), optimizer="sgd"),
            "another optimizer such as SGD",
        ),
        "a frozen_names that moves the model": (
            lambda: measured(fresh_model(), on_the_cpu()),
            "lives on cpu",
        ),
        "a smaller model": (lambda: measured(fresh_model(**SMALL)), "other sizes"),
        "the parameter tensors": (
            lambda: _story_run_reported_as([next(fresh_model().parameters())])(),
            "list of parameter names",
        ),
        "the History's {name: frozen}": (
            _story_run_reported_as({"encoder.weight": True, "decoder.weight": False}),
            "list of parameter names",
        ),
        "trained on the CPU, loaded back": (
            _trained_on_the_cpu_and_loaded,
            "no parameter of your model",
        ),
        "a list [model, frozen]": (
            lambda: [*_copy_of(_two_steps)],
            "the pair (model, frozen)",
        ),
        "frozen by gradients": (
            lambda: measured(fresh_model(), by_gradients()),
            "misses a parameter",
        ),
        "the model alone": (lambda: _copy_of(_two_steps)[0], "the pair (model, frozen)"),
        "2 steps: the same names, another run": (
            lambda: _copy_of(_two_steps),
            "another number of steps",
        ),
        "another learning rate": (
            lambda: measured(fresh_model(), lr=1e-2),
            "another learning rate",
        ),
        "trained again": (_trained_twice, "trained again"),
    },
    right={
        "the comparison written out in the cell": _frozen_inline,
        "a set of names": _frozen_as(set),
        "a tuple of names": _frozen_as(tuple),
        "names sorted": _frozen_as(sorted),
    },
)

CORPORA = (FROZEN_NAMES, FROZEN)
