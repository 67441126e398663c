"""Scenarios: the user's code runs as shown, bit-equal to the CPU when healthy, deterministic, and
a patch may change how the model computes, never what it starts from or where it runs."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import nn

from course import emps
from course.errors import CourseError
from course.mystery.bugs import bug_free_backend
from course.mystery.generate import generate
from course.mystery.scenarios import run


def _short(family):
    """The first case of a family, trained two steps."""
    scenario = next(generate(s) for s in range(200) if generate(s).design.family == family).scenario
    return dataclasses.replace(scenario, design=dataclasses.replace(scenario.design, steps=2))


SHORT = {family: _short(family) for family in ("mlp", "cnn", "attention", "bag-of-words")}


@pytest.mark.parametrize("family", SHORT)
def test_a_healthy_run_is_deterministic_and_matches_the_cpu(family):
    scenario = SHORT[family]
    torch.manual_seed(7)
    expected = torch.rand(2)
    torch.manual_seed(7)
    with emps.use_backend(bug_free_backend()):
        first, second = run(scenario), run(scenario)
    assert torch.equal(torch.rand(2), expected)  # the global RNG was not touched
    assert first.losses == second.losses == run(scenario, "cpu").losses
    assert first.moved.keys() == first.norms.keys() and len(first.losses) == 2
    assert torch.equal(scenario.data().y, scenario.setup("cpu")[1].y)


def test_the_report_reads_like_a_bug_report():
    report = run(SHORT["mlp"], "cpu")
    text = report.summary()
    assert "on cpu: loss" in text and "layers.0.weight" in text and "held-out accuracy" in text
    assert report.frozen() == [] and not report.blew_up


def _cpu_weights(model):
    trained = SHORT["mlp"].setup("cpu")[0]
    with torch.no_grad():
        for mine, theirs in zip(model.parameters(), trained.parameters(), strict=True):
            mine.copy_(theirs.to(mine.device) + 0.1)
    return model


class Intercepting(torch.Tensor):
    """A tensor subclass a learner might write to route ops elsewhere (with __torch_function__)."""


def _subclass(model):
    weight = model.layers[0].weight.detach()
    model.layers[0].weight = nn.Parameter(weight.as_subclass(Intercepting))
    return model


def _own_optimizer(model):
    class Mine(torch.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {})

    model.configure_optimizer = lambda: Mine(model.parameters())
    return model


@pytest.mark.parametrize(
    "patch, says",
    [
        (lambda m: None, "return the model"),
        (lambda m: nn.Linear(1, 1), "names or shapes"),
        (lambda m: m.to("cpu"), "moved parameters"),
        (_cpu_weights, "initial values of layers.0.weight"),
        (_subclass, "tensor subclass"),
        (_own_optimizer, "not replace it"),
    ],
)
def test_a_patch_must_keep_the_model_its_values_its_device_and_torchs_optimizer(patch, says):
    device = "cpu" if patch is _subclass else emps.DEVICE  # a subclass of the CPU's tensors
    with emps.use_backend(bug_free_backend()), pytest.raises(CourseError, match=says):
        run(SHORT["mlp"], device, patch)
