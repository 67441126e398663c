"""Every torch.optim optimizer on the emulated device: the CPU's bits, except where MPS lost them.

The model's weight is a transposed (non-contiguous) parameter, the layout that triggers the
historical bugs. On the fixed profiles every optimizer must give the CPU's bits exactly; on the
buggy ones a difference is allowed only where the recorder saw a lost write (which only the
historical kernel families can have).
"""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.emps.mps_kernels import same_bits

STEPS = 3
FIXED = ("fixed-macos14", "macos15")
BUGGY = ("2.2.1-macos14", "2.4-macos14")
# Variants worth their own run (anything not named runs with its defaults).
VARIANTS = {
    "Adam": [{}, {"amsgrad": True}, {"foreach": True}, {"weight_decay": 0.1, "maximize": True}],
    "AdamW": [{}, {"amsgrad": True}],
    "Adamax": [{}, {"foreach": True}],
    "SGD": [{"momentum": 0.9}, {"momentum": 0.9, "nesterov": True}, {}],
    "RMSprop": [{}, {"centered": True, "momentum": 0.5}],
    "NAdam": [{}, {"decoupled_weight_decay": True, "weight_decay": 0.1}],
    "RAdam": [{}, {"decoupled_weight_decay": True, "weight_decay": 0.1}],
}
SKIPPED = {"Optimizer": "the base class", "SparseAdam": "needs sparse gradients"}
CONTIGUOUS_ONLY = {"LBFGS"}  # flattens grads with .view(-1): refuses strided params on any device


def optimizers() -> list[str]:
    return [
        name
        for name in torch.optim.__all__
        if isinstance(getattr(torch.optim, name), type)
        and issubclass(getattr(torch.optim, name), torch.optim.Optimizer)
        and name not in SKIPPED
    ]


CONFIGS = [(name, kw) for name in optimizers() for kw in VARIANTS.get(name, [{}])]


def config_id(config) -> str:
    name, kwargs = config
    return name + "".join(f"-{k}={v}" for k, v in kwargs.items())


def train(device: str, name: str, kwargs: dict) -> list[torch.Tensor]:
    """A few steps of a linear model whose weight is stored transposed; the final parameters."""
    gen = torch.Generator().manual_seed(0)
    weight = torch.randn(8, 6, generator=gen).t()
    weight = torch.nn.Parameter(
        (weight.contiguous() if name in CONTIGUOUS_ONLY else weight).to(device)
    )
    stride = weight.stride()
    bias = torch.nn.Parameter(torch.randn(6, generator=gen).to(device))
    x, y = (
        torch.randn(16, 8, generator=gen).to(device),
        torch.randn(16, 6, generator=gen).to(device),
    )
    params = [weight] if name == "Muon" else [weight, bias]  # Muon takes matrices only
    opt = getattr(torch.optim, name)(params, **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((x @ weight.t() + bias - y) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(STEPS):
        opt.step(closure)
    assert weight.stride() == stride, "the parameter must keep its layout"
    return [p.detach().cpu() for p in params]


def same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(same_bits(x, y) for x, y in zip(a, b, strict=True))


def test_every_optimizer_is_covered():
    assert {"Adam", "AdamW", "Adamax", "SGD", "RMSprop", "Adagrad", "Adadelta", "NAdam"} <= set(
        optimizers()
    )
    assert {"RAdam", "ASGD", "Rprop", "LBFGS"} <= set(optimizers())


@pytest.mark.parametrize("profile", FIXED)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_fixed_profiles_give_the_cpu_bits(config, profile):
    name, kwargs = config
    reference = train("cpu", name, kwargs)
    with emps.use_profile(profile), emps.record() as log:
        result = train(emps.DEVICE, name, kwargs)
    assert not log.lost()
    assert same(result, reference)


@pytest.mark.parametrize("profile", BUGGY)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_buggy_profiles_differ_only_by_lost_writes(config, profile):
    name, kwargs = config
    reference = train("cpu", name, kwargs)
    with emps.use_profile(profile), emps.record() as log:
        result = train(emps.DEVICE, name, kwargs)
    broken = emps.get_profile(profile).broken
    assert {event.family for event in log.lost()} <= broken
    assert same(result, reference) or log.lost()  # a lost write may not matter yet (RAdam)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adagrad", "RMSprop"])
def test_2_2_1_changes_the_adam_family_results(name):
    with emps.use_profile("2.2.1-macos14"):
        assert not same(train(emps.DEVICE, name, {}), train("cpu", name, {}))


@pytest.mark.parametrize("foreach", [False, True])
def test_adam_on_2_2_1_loses_exp_avg_sq_on_both_paths(foreach):
    with emps.use_profile("2.2.1-macos14"), emps.record() as log:
        train(emps.DEVICE, "Adam", {"foreach": foreach})
    assert {e.op for e in log.lost()} == {"aten::addcmul_", "aten::addcdiv_"}
