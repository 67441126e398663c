"""01.loss_floor and 01.floor as test data: the notebook's answers, and the mistakes that give a
wrong floor, keyed by their flaw with the words their feedback must hold."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from course.model.runs import dataset
from tests.corpus import Corpus


def _loss_floor():
    def best_possible_loss(data):
        perfect = data.codes @ data.features  # every sample rebuilt from its true features
        return (data.x - perfect).pow(2).sum(-1).mean().item()

    return best_possible_loss


best_possible_loss = _loss_floor()  # the notebook's name, which 01.floor's answer calls


def error(data):
    """What a perfect model misses, as the wrong answers compute it."""
    return data.x - data.codes @ data.features


def _rule(loss):
    """A learner's best_possible_loss that computes `loss(data)`, a tensor, and returns its item."""

    def best_possible_loss(data):
        return loss(data).item()

    return best_possible_loss


def _printed():
    def best_possible_loss(data):
        print((data.x - data.codes @ data.features).pow(2).sum(-1).mean().item())

    return best_possible_loss


def _into_the_data():
    def best_possible_loss(data):
        data.x.sub_(data.codes @ data.features)  # what is left is the noise: in place
        return data.x.pow(2).sum(-1).mean().item()

    return best_possible_loss


def _loop():
    def best_possible_loss(data):
        total = 0.0
        for x, code in zip(data.x, data.codes, strict=True):
            total += (x - code @ data.features).pow(2).sum().item()
        return total / len(data.x)

    return best_possible_loss


def _in_float64(data):
    perfect = data.codes.double() @ data.features.double()
    return (data.x.double() - perfect).square().sum(1).mean()


LOSS_FLOOR = Corpus(
    "01.loss_floor",
    _loss_floor,
    wrong={
        "a mean over every element": (
            lambda: _rule(lambda d: error(d).pow(2).mean()),
            "averaged over every element",
        ),
        "a model that outputs zeros": (
            lambda: _rule(lambda d: d.x.pow(2).sum(-1).mean()),
            "a model that outputs zeros",
        ),
        "a norm": (lambda: _rule(lambda d: error(d).norm(dim=-1).mean()), "mean distance (a norm)"),
        "summed over samples": (
            lambda: _rule(lambda d: error(d).pow(2).sum()),
            "summed over the samples too",
        ),
        "an RMS": (
            lambda: _rule(lambda d: error(d).pow(2).sum(-1).mean().sqrt()),
            "square root of the loss",
        ),
        "absolute errors": (
            lambda: _rule(lambda d: error(d).abs().sum(-1).mean()),
            "sums absolute errors",
        ),
        "the total over the dimensions": (
            lambda: _rule(lambda d: error(d).pow(2).sum() / d.x.shape[1]),
            "divides the total by the dimensions",
        ),
        "the course's floor typed in": (lambda: lambda data: 0.0384, "on every dataset"),
        "a tensor": (lambda: lambda data: error(data).pow(2).sum(-1).mean(), "use .item()"),
        "an assumed noise level": (
            lambda: lambda data: data.x.shape[1] * 0.01**2,  # the noise level make_data was given
            "assumed noise level",
        ),
        "rounded": (
            lambda: lambda data: round(best_possible_loss(data), 4),
            "rounds the loss to 4 decimals",
        ),
        "an int": (
            lambda: lambda data: int(best_possible_loss(data)),
            "int() (or //) drops the decimals",
        ),
        "a NumPy value": (
            lambda: lambda data: error(data).pow(2).sum(-1).mean().numpy(),
            "NumPy value",
        ),
        "written into the data": (_into_the_data, "changed data.x in place"),
        "its data ignored": (
            lambda: lambda data: best_possible_loss(dataset()),
            "on every dataset",
        ),
        "one batch": (
            lambda: lambda data: error(data)[:256].pow(2).sum(-1).mean().item(),
            "averaged over all samples",
        ),
        "F.mse_loss's mean": (
            lambda: lambda data: F.mse_loss(data.codes @ data.features, data.x).item(),
            "averaged over every element",
        ),
        "one dimension": (
            lambda: lambda data: error(data)[:, 0].pow(2).mean().item(),
            "all of a sample's dimensions",
        ),
        "printed, not returned": (_printed, "print only shows it"),
        "the noise's variance": (
            lambda: lambda data: (error(data).var() * data.x.shape[1]).item(),
            "subtracts the error's mean",
        ),
        "each dimension's variance": (
            lambda: lambda data: error(data).var(0).sum().item(),
            "subtracts the error's mean",
        ),
    },
    right={
        "averaged per dimension, then summed": lambda: _rule(
            lambda d: error(d).pow(2).mean(0).sum()
        ),
        "in float64": lambda: _rule(_in_float64),
        "a squared vector norm": lambda: (
            lambda data: float(torch.linalg.vector_norm(error(data), dim=-1).pow(2).mean())
        ),
        "F.mse_loss rescaled": lambda: (
            lambda data: F.mse_loss(data.codes @ data.features, data.x).item() * data.x.shape[1]
        ),
        "a loop over samples": _loop,
    },
)


def _floor():
    floor = best_possible_loss(dataset())
    return floor


FLOOR = Corpus(
    "01.floor",
    _floor,
    wrong={
        "a mean over every element": (
            lambda: error(dataset()).pow(2).mean().item(),
            "averaged over every element",
        ),
        "a model that outputs zeros": (
            lambda: dataset().x.pow(2).sum(-1).mean().item(),
            "a model that outputs zeros",
        ),
        "zero": (lambda: 0.0, "rebuilding the noise too"),
        "rounded to 2 decimals": (
            lambda: round(best_possible_loss(dataset()), 2),
            "rounded to 2 decimals",
        ),
        "a tensor": (lambda: error(dataset()).pow(2).sum(-1).mean(), "use .item()"),
        "a string": (lambda: f"{best_possible_loss(dataset()):.3f}", "a string"),
        "the stalled loss": (lambda: 8.8, "where the run stalls"),
        "a norm": (lambda: error(dataset()).norm(dim=-1).mean().item(), "mean distance (a norm)"),
        "the printout typed in": (lambda: 0.0383, "rounded to 4 decimals"),
        "rounded to 3 decimals": (
            lambda: round(best_possible_loss(dataset()), 3),
            "rounded to 3 decimals",
        ),
        "the function, not called": (lambda: best_possible_loss, "a function: call it"),
        "a NumPy value": (lambda: np.float32(best_possible_loss(dataset())), "NumPy value"),
        "another seed's data": (
            lambda: best_possible_loss(dataset(seed=1)),
            "measure it with your function on dataset()",
        ),
        "the loss of step 1": (lambda: 19.0, "where the run stalls"),
        "in a list": (lambda: [best_possible_loss(dataset())], "a list"),
        "an assumed noise level": (
            lambda: dataset().x.shape[1] * 0.01**2,
            "measure it with your function on dataset()",
        ),
        "rounded to 5 decimals": (  # 1e-5 from the floor, within summation order's 1e-4
            lambda: round(best_possible_loss(dataset()), 5),
            "rounded to 5 decimals",
        ),
    },
    right={
        "summed in another order": lambda: best_possible_loss(dataset()) * (1 + 1e-6),
    },
)

CORPORA = (LOSS_FLOOR, FLOOR)
