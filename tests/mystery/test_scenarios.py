"""Scenarios and their models: deterministic, bit-equal to the CPU when healthy, and each with
the habit that gives a tensor its unusual layout."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from course import emps
from course.errors import CourseError
from course.mystery.bugs import bug_free_backend, condition_holds
from course.mystery.scenarios import SCENARIOS, data_of, run, setup

SHORT = {name: dataclasses.replace(s, steps=3) for name, s in SCENARIOS.items()}


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_healthy_run_is_deterministic_and_matches_the_cpu(name):
    torch.manual_seed(7)
    expected = torch.rand(2)
    torch.manual_seed(7)
    with emps.use_backend(bug_free_backend()):
        first, second = run(SHORT[name], 3), run(SHORT[name], 3)
    assert torch.equal(torch.rand(2), expected)  # the global RNG was not touched
    assert first.losses == second.losses
    assert first.losses == run(SHORT[name], 3, device="cpu").losses
    assert first.moved.keys() == first.norms.keys() and len(first.losses) == 3
    assert torch.equal(data_of(SHORT[name], 3).y, setup(SHORT[name], 3, "cpu")[1].y)


LAYOUTS = {
    "ortho-mlp": ("mid.weight", "transposed"),
    "bag-of-words": ("vectors", "transposed"),
    "border-cnn": ("conv2.weight", "channels-last"),
    "fused-qkv": ("wk", "storage-offset"),
    "half-mlp": ("mid.weight", "bfloat16"),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_each_model_has_its_habit(name):
    model, _ = setup(SCENARIOS[name], 0, emps.DEVICE)
    parameter, condition = LAYOUTS[name]
    assert condition_holds(condition, model.get_parameter(parameter))


def test_the_attention_heads_are_permuted_views():
    model, data = setup(SCENARIOS["biased-heads"], 0, "cpu")
    q = model.split_heads(model.q(data.x[:2]), model.heads)
    assert condition_holds("permuted", q)


def test_the_report_reads_like_a_bug_report():
    with emps.use_backend(bug_free_backend()):
        report = run(SHORT["ortho-mlp"], 0)
    text = report.summary()
    assert "ortho-mlp on emps:0" in text and "mid.weight" in text and "held-out accuracy" in text
    assert report.frozen() == [] and not report.blew_up


def test_a_patch_must_keep_the_model():
    scenario = SHORT["ortho-mlp"]
    with pytest.raises(CourseError, match="return the model"):
        run(scenario, 0, device="cpu", patch=lambda m: None)
    with pytest.raises(CourseError, match="names or shapes"):
        run(scenario, 0, device="cpu", patch=lambda m: torch.nn.Linear(1, 1))
