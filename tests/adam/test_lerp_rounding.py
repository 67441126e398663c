"""What notebook 03 says about `lerp_`, measured on the installed torch.

03's prompt for 03.adam_step: `lerp_` computes `m + w * (g - m)`, the difference rounded and then
a fused multiply-add rounded once more (from w = 0.5 up it starts from `g`, so w = 1 gives `g`
exactly); about 11% of a million float32 elements differ from the formula rounded once, and
about 37% of `mul_` then `add_`'s do.
"""

from __future__ import annotations

import torch

W = 0.1  # 1 - beta1 for Adam's default betas


def _million() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(1_000_000, generator=gen), torch.randn(1_000_000, generator=gen)


def _share_differing(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a != b).float().mean().item()


def test_lerp_is_the_difference_rounded_then_a_fused_multiply_add():
    m, g = _million()
    lerp = m.clone().lerp_(g, W)
    w = torch.tensor(W, dtype=torch.float32).double()
    fused = (m.double() + w * (g - m).double()).float()  # one rounding for the multiply-add
    unfused = m + torch.tensor(W, dtype=torch.float32) * (g - m)  # a build without FMA
    assert torch.equal(lerp, fused) or torch.equal(lerp, unfused)


def test_lerp_is_not_the_formula_rounded_once_nor_mul_then_add():
    m, g = _million()
    lerp = m.clone().lerp_(g, W)
    once = (m.double() + W * (g.double() - m.double())).float()
    two_ops = m.clone().mul_(1 - W).add_(g, alpha=W)
    assert 0.08 < _share_differing(lerp, once) < 0.14  # "about 11%"
    assert 0.30 < _share_differing(two_ops, once) < 0.45  # "about 37%"


def test_from_one_half_up_lerp_starts_from_the_end():
    m, g = _million()
    assert torch.equal(m.clone().lerp_(g, 1.0), g)
