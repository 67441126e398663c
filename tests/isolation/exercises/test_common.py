"""What 02's checkers share: hidden benches, and verdicts about how a step ran."""

from __future__ import annotations

import torch

from course.isolation import experiments
from course.isolation.exercises.common import (
    SMALL,
    Variant,
    stepped_other,
    stepped_outside,
    wrong_setting,
)
from course.isolation.experiments import update_settings


def test_a_variant_hands_out_its_update_with_its_learning_rate():
    variant = Variant("a small CPU bench", "why", {"device": "cpu", **SMALL}, lr=0.5)
    bench = variant.bench()
    bench.backward()
    optimizer = bench.step(variant.make_update())
    assert isinstance(optimizer, torch.optim.Adam) and optimizer.param_groups[0]["lr"] == 0.5


def test_a_step_outside_the_bench_is_named_and_one_inside_is_not():
    bench = experiments.bench(device="cpu", **SMALL)
    bench.backward()
    optimizer = torch.optim.SGD(bench.model.parameters(), lr=0.1)
    with bench:
        optimizer.step()
    assert stepped_outside(bench, "here") is None
    optimizer.step()
    assert "stepped SGD outside the bench" in stepped_outside(bench, "here").message


def test_another_optimizer_than_the_one_handed_in_is_named():
    bench = experiments.bench(device="cpu", **SMALL)
    bench.backward()
    bench.step(experiments.sgd())
    variant = Variant("a bench", "why")
    assert "stepped SGD, but the update it was given was Adam" in (
        stepped_other(bench, variant).message
    )
    sgd = Variant("b", "why", update=experiments.sgd, optimizer="SGD")
    assert stepped_other(bench, sgd) is None


def test_a_setting_other_than_the_update_asked_for_is_named():
    """eps, amsgrad, maximize, momentum...: any hyperparameter, not only lr and betas."""
    bench = experiments.bench(device="cpu", **SMALL)
    bench.backward()
    bench.step(lambda params: torch.optim.SGD(params, lr=1e-3, momentum=0.9))
    verdict = stepped_other(bench, Variant("b", "why", update=experiments.sgd, optimizer="SGD"))
    assert "your SGD ran with momentum = 0.9" in verdict.message
    assert wrong_setting(bench, update_settings(experiments.sgd()), "b", "x") is not None
    fresh = experiments.bench(device="cpu", **SMALL)
    fresh.backward()
    fresh.step(lambda params: torch.optim.SGD(params, lr=1e-3, foreach=False))  # the default path
    assert wrong_setting(fresh, update_settings(experiments.sgd()), "b", "x") is None
