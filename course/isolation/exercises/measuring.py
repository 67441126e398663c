"""02.did_not_move, 02.grad_check and the 02.zero_pattern prediction: the measuring tools.

The checkers hand the learner's function made-up pairs and gradients, each built so that one
plausible shortcut gets it wrong (a one-ulp change, swapped values, NaN garbage, a largest
entry in the last row, scattered zeros), and name the shortcut when the answer matches it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
from course.isolation.exercises.common import (
    SMALL,
    statistic_verdict,
)
from course.isolation.experiments import ENCODER, bench

# ---- 02.did_not_move -------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """One before/after pair for did_not_move, with the answer and why it is that answer."""

    what: str
    before: torch.Tensor
    after: torch.Tensor
    frozen: bool
    why: str


def _changed(w: torch.Tensor, index: tuple[int, int], value: float) -> torch.Tensor:
    out = w.clone()
    out[index] = value
    return out


def _did_not_move_pairs() -> list[Pair]:
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(6, 4, generator=gen)
    quarters = torch.randperm(24, generator=gen).reshape(6, 4) / 4.0 - 3.0  # exact sums
    swapped = _changed(_changed(quarters, (4, 1), quarters[5, 2].item()), (5, 2), quarters[4, 1])
    ulp = torch.nextafter(w[5, 3], torch.tensor(float("inf"))).item()
    nan = w.clone()
    nan[5] = float("nan")
    return [
        Pair(
            "an identical copy",
            w,
            w.clone(),
            True,
            "a snapshot is a copy: compare values, not identity or memory addresses",
        ),
        Pair(
            "the same values stored another way in memory",
            quarters,
            quarters.t().contiguous().t(),
            True,
            "same values, other strides: compare the values, not the layout",
        ),
        Pair(
            "a change of 0.5 in the last element",
            w,
            _changed(w, (5, 3), w[5, 3] + 0.5),
            False,
            "one changed element is a move: compare every element, not the first ones "
            "or a share of them",
        ),
        Pair(
            "two values swapped between positions",
            quarters,
            swapped,
            False,
            "a sum, a mean or sorted values cannot see values that moved to other places",
        ),
        Pair(
            "the last row overwritten with NaN",
            w,
            nan,
            False,
            "NaN compares false with everything, so a test for 'a difference > 0' reads NaN "
            "garbage as unchanged",
        ),
        Pair(
            "one element moved to the next float32 value",
            w,
            _changed(w, (5, 3), ulp),
            False,
            "allclose and thresholds hide a one-ulp change; 'frozen' means bitwise equal",
        ),
        Pair(
            "an identical copy on the emulated device",
            w,
            w.to(emps.DEVICE),
            True,
            "a snapshot lives on the CPU and a parameter may not: bring both to the CPU",
        ),
    ]


def _check_did_not_move(fn: Callable) -> Verdict:
    for pair in _did_not_move_pairs():
        try:
            got = fn(pair.before, pair.after)
        except RuntimeError as error:
            return failed(
                f"for {pair.what} your function raised {type(error).__name__}: "
                f"{str(error).splitlines()[0]}; {pair.why}"
            )
        if not isinstance(got, bool):
            return failed(
                f"return a bool (True = did not move); for {pair.what} you returned {got!r}",
                type(got).__name__,
                "bool",
            )
        if got != pair.frozen:
            return failed(f"wrong for {pair.what}: {pair.why}", got, pair.frozen)
    return passed("exact equality, to the last bit: that is what 'frozen' means.")


def _reference_did_not_move():
    def did_not_move(before, after):
        return torch.equal(before.cpu(), after.cpu())

    return did_not_move


register(
    Exercise(
        name="02.did_not_move",
        prompt="Write did_not_move(before, after) -> bool: True only if no element changed at all.",
        checker=_check_did_not_move,
        hint="'Close' is not 'equal': allclose hides a one-ulp change. Use an exact comparison "
        "(on the CPU: a tensor on another device is never equal to a CPU one).",
        reference=_reference_did_not_move,
        wrong_answers=(
            lambda: lambda before, after: torch.allclose(before.cpu(), after.cpu()),
            lambda: lambda before, after: bool((after.cpu() - before).abs().max() < 1e-6),
            lambda: lambda before, after: before.stride() == after.stride(),
            lambda: lambda before, after: before is after,
            lambda: lambda before, after: bool(before.sum() == after.cpu().sum()),
            lambda: lambda before, after: bool(before[0, 0] == after.cpu()[0, 0]),
            lambda: lambda before, after: not bool(((after.cpu() - before).abs() > 0).any()),
            lambda: lambda before, after: torch.equal(before, after),
        ),
    )
)

# ---- 02.grad_check ---------------------------------------------------------------------------


def _story_grads() -> dict[str, torch.Tensor]:
    """Real gradients of the story's model and of a smaller one, on the emulated device."""
    out = {}
    for label, settings in (("the story's", {}), ("a smaller model's", {"seed": 5, **SMALL})):
        b = bench(**settings)
        b.backward()
        for name in ("encoder.weight", "decoder.weight"):
            out[f"{label} {name} gradient"] = b.parameter(name).grad
    return out


def _grad_cases() -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    tiny = torch.randn(8, 5, generator=gen) * 1e-12  # small, but not one of them is zero
    mostly_negative = -torch.rand(8, 5, generator=gen) - 0.5
    mostly_negative[3] = 0.0
    largest_last = torch.rand(8, 5, generator=gen)
    largest_last[7, 4] = 9.0
    scattered = torch.randn(8, 5, generator=gen) * (torch.rand(8, 5, generator=gen) > 0.3)
    return {
        **_story_grads(),
        "a gradient whose largest entries are negative": mostly_negative,
        "a gradient whose largest entry is in its last row": largest_last,
        "a gradient whose zeros are scattered, not whole rows": scattered,
        "a gradient of tiny (1e-12) but non-zero values": tiny,
        "a gradient with some -0.0 entries": torch.tensor([[0.5, -0.0], [0.0, -2.0]]),
    }


# What a wrong statistic computes, and what it misses: checked against a learner's number.
MAX_MISTAKES = (
    (
        lambda g: g.max(),
        "that is the largest signed value: a large negative gradient is large "
        "too, so take the absolute value first",
    ),
    (lambda g: g[0].abs().max(), "that is the first row's largest: look at every element"),
    (lambda g: g.abs().mean(), "that is the mean magnitude: the question is the largest one"),
)
ZERO_MISTAKES = (
    (lambda g: (g == 0).sum(), "that is the number of zeros: divide by the number of elements"),
    (lambda g: (g != 0).float().mean(), "that is the fraction of NON-zero elements"),
    (
        lambda g: (g.abs() < 1e-8).float().mean(),
        "that counts small values as zeros: 'exactly zero' is == 0, and 1e-12 is not 0",
    ),
    (
        lambda g: (g == 0).all(dim=1).float().mean(),
        "that is the fraction of rows that are all zero: count the elements",
    ),
)


def _check_grad_check(fn: Callable) -> Verdict:
    reference = _reference_grad_check()
    for what, grad in _grad_cases().items():
        got = fn(grad)
        if not (isinstance(got, tuple) and len(got) == 2):
            return failed(
                f"return a pair (max |grad|, fraction of exact zeros); for {what} you returned "
                f"{got!r}",
                type(got).__name__,
                "tuple of two floats",
            )
        want = reference(grad)
        g = grad.cpu()
        for label, mine, right, mistakes in (
            ("max |grad|", got[0], want[0], MAX_MISTAKES),
            ("zero fraction", got[1], want[1], ZERO_MISTAKES),
        ):
            known = [(float(mistake(g)), cause) for mistake, cause in mistakes]
            verdict = statistic_verdict(label, f"for {what}", float(mine), right, known)
            if verdict is not None:
                return verdict
    return passed(
        "max |grad| and the fraction of exact zeros, right on real and made-up gradients."
    )


def _reference_grad_check():
    def grad_check(grad):
        return grad.abs().max().item(), (grad == 0).float().mean().item()

    return grad_check


register(
    Exercise(
        name="02.grad_check",
        prompt="Write grad_check(grad) -> (max |grad|, fraction of elements exactly zero).",
        checker=_check_grad_check,
        hint="Largest magnitude: the largest absolute value. Zero fraction: count the elements "
        "equal to 0 (exactly, not 'small'), divided by the number of elements.",
        reference=_reference_grad_check,
        wrong_answers=(
            lambda: lambda g: (g.max().item(), (g == 0).float().mean().item()),
            lambda: lambda g: (g.abs().max().item(), (g.abs() < 1e-8).float().mean().item()),
            lambda: lambda g: (g.abs().max().item(), (g == 0).sum().item()),
            lambda: lambda g: (g.abs().max().item(), g.count_nonzero().item() / g.numel()),
            lambda: lambda g: (g[0].abs().max().item(), (g == 0).float().mean().item()),
            lambda: lambda g: (g.abs().mean().item(), (g == 0).float().mean().item()),
            lambda: lambda g: (g.abs().max().item(), (g == 0).all(1).float().mean().item()),
        ),
    )
)


# ---- 02.zero_pattern (a prediction) ----------------------------------------------------------


def _zero_pattern() -> str:
    b = bench()
    b.backward()
    zero = b.parameter(ENCODER).grad.cpu() == 0  # (n_features, d_model)
    if not zero.any():
        return "there are no zeros"
    if torch.equal(zero.all(dim=1), zero.any(dim=1)):
        return "whole rows"
    if torch.equal(zero.all(dim=0), zero.any(dim=0)):
        return "whole columns"
    return "scattered elements"


register_prediction(
    Prediction(
        "02.zero_pattern",
        "Where are the exact zeros in encoder.weight's gradient (shape [1536, 384]: one row "
        "per feature)?",
        ("whole rows", "whole columns", "scattered elements", "there are no zeros"),
        _zero_pattern,
        "Whole rows: TopK keeps 32 of 1536 features per sample, and a feature that no sample "
        "of the batch kept passes back no gradient at all, so its whole row is zero. The zero "
        "fraction is the share of features nobody in the batch used: it depends on the batch "
        "size, k, the width and the data. That is why ours is not the story's 88.5%.",
    )
)
