"""01.snapshot as test data: the notebook's snapshot, copies written other ways, and the
snapshots that are not copies (or not of these values), keyed by their flaw."""

from __future__ import annotations

import copy

import torch

from course.model.runs import fresh_model
from tests.corpus import Corpus


def _snapshot():
    def snapshot(model):
        return {name: p.detach().cpu().clone() for name, p in model.named_parameters()}

    return snapshot


snapshot = _snapshot()  # the notebook's name, which its frozen_names calls


def pairs(model):
    """(name, parameter) pairs, as the wrong answers walk them."""
    return list(model.named_parameters())


def _each(copy_of):
    """A learner's snapshot that keeps `copy_of(p)` under each parameter's name."""
    return lambda: lambda model: {n: copy_of(p) for n, p in pairs(model)}


SNAPSHOT = Corpus(
    "01.snapshot",
    _snapshot,
    wrong={
        "the parameters themselves": (
            lambda: lambda model: dict(model.named_parameters()),
            "the parameter itself",
        ),
        "state_dict()": (lambda: lambda model: model.state_dict(), "shares memory"),
        ".detach()": (_each(lambda p: p.detach()), "shares memory"),
        ".detach().cpu(), a copy only off the CPU": (
            _each(lambda p: p.detach().cpu()),
            "the same model on the CPU",
        ),
        ".tolist()": (_each(lambda p: p.tolist()), "is a list (.tolist())"),
        ".numpy(), shared on the CPU": (_each(lambda p: p.detach().cpu().numpy()), "NumPy array"),
        "weights only": (
            lambda: lambda model: {n: p.detach().clone() for n, p in pairs(model) if "weight" in n},
            "no entry for encoder.bias",
        ),
        "in float16": (_each(lambda p: p.detach().half()), "float16 rounds them"),
        "the model moved to the CPU": (
            lambda: lambda model: {n: p.detach().clone() for n, p in pairs(model.cpu())},
            "moved the model to cpu",
        ),
        "requires_grad switched off": (
            _each(lambda p: p.requires_grad_(False).clone()),
            "changed encoder.weight.requires_grad",
        ),
        # a copy only of the non-contiguous encoder weight
        ".contiguous()": (_each(lambda p: p.detach().contiguous()), "shares memory"),
        "state_dict().copy(), the same tensors": (
            lambda: lambda model: model.state_dict().copy(),
            "shares memory",
        ),
        ".data": (_each(lambda p: p.data), "shares memory"),
        "the first row only": (
            _each(lambda p: p.detach().clone()[0]),
            "does not hold the parameter's values",
        ),
        "keyed by position": (
            lambda: lambda model: {i: p.detach().clone() for i, p in enumerate(model.parameters())},
            "no entry for encoder.weight",
        ),
        "a copy of the model": (lambda: lambda model: copy.deepcopy(model), "return a dict"),
        "a list of pairs": (
            lambda: lambda model: [(n, p.detach().clone()) for n, p in pairs(model)],
            "return a dict",
        ),
        "of another model": (
            lambda: lambda model: {n: p.detach().cpu().clone() for n, p in pairs(fresh_model())},
            "does not hold the parameter's values",
        ),
        "in float64": (_each(lambda p: p.detach().double()), "float64"),
        "a NumPy copy": (
            _each(lambda p: p.detach().cpu().numpy().copy()),
            "NumPy array, not a tensor",
        ),
        "reshaped to its own shape, a view": (
            _each(lambda p: p.detach().reshape(p.shape)),
            "shares memory",
        ),
        "flattened": (
            _each(lambda p: p.detach().flatten().clone()),
            "does not hold the parameter's values",
        ),
    },
    right={
        ".clone() alone": _each(lambda p: p.clone()),
        "a deep copy of state_dict()": lambda: lambda model: copy.deepcopy(model.state_dict()),
        ".to('cpu', copy=True)": _each(lambda p: p.detach().to("cpu", copy=True)),
        "copied into an empty tensor": _each(lambda p: torch.empty_like(p).copy_(p.detach())),
        "a new tensor from + 0": _each(lambda p: p.detach() + 0),
    },
)

CORPORA = (SNAPSHOT,)
