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
    close,
    is_pair,
    same_answer,
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
    # +0.25 and -0.25 at the corners of a rectangle: every row and column sum stays the same
    balanced = quarters.clone()
    balanced[[1, 4], [0, 3]] += 0.25
    balanced[[1, 4], [3, 0]] -= 0.25
    flipped = _changed(quarters, (3, 2), -quarters[3, 2].item() or 1.0)
    # a one-ulp change far below any absolute tolerance (1e-7) and any relative one (1e-7)
    small = w * 1e-3
    small[5, 3] = 3.9e-3  # just below 2**-8, where a float32 step is 6e-8 of the value
    ulp = torch.nextafter(small[5, 3], torch.tensor(float("inf"))).item()
    large = torch.randn(1536, 384, generator=gen)  # the story's encoder size
    zeroed = w.clone()
    zeroed[5] = 0.0  # a row of zeros overwritten with NaN: nan_to_num gives the zeros back
    nan = zeroed.clone()
    nan[5] = float("nan")
    fine = w.double() * 1e-3  # a float64 tensor (the float64 run's): its step is 1e-16 relative
    next_up = torch.nextafter(fine[2, 1], torch.tensor(float("inf"), dtype=torch.float64))
    return [
        Pair(
            "an identical copy",
            w,
            w.clone(),
            True,
            "a snapshot is a copy: compare values, not identity or memory addresses",
        ),
        Pair(
            "every element changed by 1.0",
            w,
            w + 1.0,
            False,
            "a function that answers without comparing the values cannot tell a frozen "
            "tensor from a moving one",
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
            "a change of 0.5 in the last of the story's 589,824 elements",
            large,
            _changed(large, (1535, 383), large[1535, 383] + 0.5),
            False,
            "the encoder has 589,824 elements: compare every one of them, not the first "
            "rows or the first thousand",
        ),
        Pair(
            "two values swapped between positions",
            quarters,
            swapped,
            False,
            "a sum, a mean or sorted values cannot see values that moved to other places",
        ),
        Pair(
            "four values changed so that every row and column sum stays the same",
            quarters,
            balanced,
            False,
            "sums or means along rows or columns cannot see changes that cancel in them",
        ),
        Pair(
            "one element's sign flipped",
            quarters,
            flipped,
            False,
            "|values| (abs) are the same, the values are not: compare the values themselves",
        ),
        Pair(
            "a last row of zeros overwritten with NaN",
            zeroed,
            nan,
            False,
            "NaN compares false with everything, so a test for 'a difference > 0' reads NaN "
            "garbage as unchanged, and nan_to_num turns it back into the zeros it replaced",
        ),
        Pair(
            "one element moved to the next float32 value",
            small,
            _changed(small, (5, 3), ulp),
            False,
            "allclose, rounding, a lower precision and every threshold hide a one-ulp change; "
            "'frozen' means bitwise equal",
        ),
        Pair(
            "an identical copy on the emulated device",
            w,
            w.to(emps.DEVICE),
            True,
            "a snapshot lives on the CPU and a parameter may not: bring both to the CPU",
        ),
        Pair(
            "a tensor on the emulated device and its identical copy on the CPU",
            w.to(emps.DEVICE),
            w,
            True,
            "either side may live on the device (a parameter before the step, say): bring "
            "both to the CPU",
        ),
        Pair(
            "one element of a float64 tensor moved to the next float64 value",
            fine,
            _changed(fine, (2, 1), next_up.item()),
            False,
            "a float64 tensor (the float64 run's encoder is one) moves by 1e-16 of a value: "
            "a tolerance, however small, or a cast to float32 hides that; compare exactly",
        ),
    ]


def _bits(t: torch.Tensor) -> torch.Tensor:
    """A tensor's bit patterns (int32 words) on the CPU: NaN equals itself here, as memory does."""
    return t.detach().cpu().contiguous().view(torch.int32).clone()


def _wrote_into(pair: Pair, before_bits: torch.Tensor, after_bits: torch.Tensor) -> bool:
    return not (
        torch.equal(_bits(pair.before), before_bits) and torch.equal(_bits(pair.after), after_bits)
    )


def _check_did_not_move(fn: Callable) -> Verdict:
    for pair in _did_not_move_pairs():
        kept = _bits(pair.before), _bits(pair.after)
        try:
            got = fn(pair.before, pair.after)
        except RuntimeError as error:
            return failed(
                f"for {pair.what} your function raised {type(error).__name__}: "
                f"{str(error).splitlines()[0]}; {pair.why}"
            )
        if _wrote_into(pair, *kept):
            return failed(
                f"for {pair.what} your function changed its inputs: a check must only read "
                "them (`.cpu()` of a CPU tensor is the tensor itself, so an in-place op on it "
                "writes into the snapshot). Compare without writing: torch.equal."
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
            lambda: (
                lambda before, after: torch.equal(
                    before.cpu().flatten()[:1000], after.cpu().flatten()[:1000]
                )
            ),
            lambda: lambda before, after: torch.equal(before.cpu().abs(), after.cpu().abs()),
            lambda: lambda before, after: torch.equal(before.cpu().sum(0), after.cpu().sum(0)),
            lambda: (
                lambda before, after: bool(
                    torch.isclose(before.cpu(), after.cpu(), rtol=0, atol=1e-7).all()
                )
            ),
            lambda: lambda before, after: torch.equal(before.half(), after.cpu().half()),
            lambda: lambda before, after: torch.equal(before, after.cpu()),
            lambda: lambda before, after: True,
            lambda: lambda before, after: bool((before.cpu().sub_(after.cpu()) == 0).all()),
            lambda: (
                lambda before, after: bool(
                    torch.isclose(before.cpu(), after.cpu(), rtol=1e-9, atol=0).all()
                )
            ),
            lambda: (
                lambda before, after: torch.equal(
                    before.cpu().nan_to_num(), after.cpu().nan_to_num()
                )
            ),
            lambda: lambda before, after: torch.equal(before.cpu().float(), after.cpu().float()),
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
    signs = torch.randint(0, 2, (8, 5), generator=gen) * 2 - 1
    subnormal = signs * (torch.rand(8, 5, generator=gen) + 0.5) * 1e-40  # below finfo.tiny
    return {
        **_story_grads(),
        "a gradient whose largest entries are negative": mostly_negative,
        "a gradient whose largest entry is in its last row": largest_last,
        "a gradient whose zeros are scattered, not whole rows": scattered,
        "a gradient of tiny (1e-12) but non-zero values": tiny,
        "a gradient of subnormal (1e-40) but non-zero values": subnormal,
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
    (lambda g: g[:, 0].abs().max(), "that is the first column's largest: look at every element"),
    (lambda g: g.abs().mean(), "that is the mean magnitude: the question is the largest one"),
    (
        lambda g: g.norm(),
        "that is the norm (all elements together): the question is the largest one",
    ),
    (lambda g: g.abs().min(), "that is the smallest magnitude: the question is the largest one"),
)
ZERO_MISTAKES = (  # the first that matches is named: the subnormal one before NON-zero
    (
        lambda g: (g.abs() < torch.finfo(torch.float32).tiny).float().mean(),
        "that counts subnormal values as zeros: 'exactly zero' is == 0, and 1e-40 is not 0",
    ),
    (lambda g: (g == 0).sum(), "that is the number of zeros: divide by the number of elements"),
    (lambda g: (g != 0).float().mean(), "that is the fraction of NON-zero elements"),
    (
        lambda g: (g.abs() < 1e-8).float().mean(),
        "that counts small values as zeros: 'exactly zero' is == 0, and 1e-12 is not 0",
    ),
    (
        lambda g: (g == 0).sum() / len(g),
        "that divides by the number of rows (len): divide by the number of elements (numel)",
    ),
    (
        lambda g: (g == 0).float().mean() * 100,
        "that is a percentage: give the fraction, between 0 and 1",
    ),
    (
        lambda g: (g == 0).all(dim=1).float().mean(),
        "that is the fraction of rows that are all zero: count the elements",
    ),
    (
        lambda g: (g == 0).all(dim=0).float().mean(),
        "that is the fraction of columns that are all zero: count the elements",
    ),
    (
        lambda g: (g[0] == 0).float().mean(),
        "that is the first row's zero fraction: count the zeros among every element",
    ),
    (
        lambda g: (g.half() == 0).float().mean(),
        "that counts values too small for float16 as zeros: compare the gradient itself, "
        "in its own dtype, with 0",
    ),
    (
        lambda g: (g <= 0).float().mean(),
        "that counts the negative values too: exactly zero is == 0",
    ),
    (
        lambda g: (g == 0).any(dim=1).float().mean(),
        "that is the fraction of rows with a zero in them: count the elements",
    ),
)


def _check_grad_check(fn: Callable) -> Verdict:
    reference = _reference_grad_check()
    seen: dict[tuple, tuple[str, tuple]] = {}  # a learner's pair -> where, and the right pair
    cases = _grad_cases()
    answers = _answers(fn, cases)  # a pure function: all cases first
    if isinstance(answers, Verdict):
        return answers
    for what, (grad, got) in zip(cases, answers, strict=True):
        if not is_pair(got):
            return failed(
                f"return a pair (max |grad|, fraction of exact zeros); for {what} you returned "
                f"{got!r}",
                type(got).__name__,
                "a pair of two floats",
            )
        want = reference(grad)
        mine = (float(got[0]), float(got[1]))
        verdict = same_answer(seen, mine, f"for {what}", want, "`grad`")
        verdict = verdict or _statistics(grad, what, mine, want, answers)
        if verdict is not None:
            return verdict
    return passed(
        "max |grad| and the fraction of exact zeros, right on real and made-up gradients."
    )


def _answers(fn: Callable, cases: dict[str, torch.Tensor]) -> list[tuple] | Verdict:
    """The learner's pair for every gradient, or which gradient their function raised on.

    Why name it: a function that works on the CPU can fail on the device (float64 there, for
    one), and "checking raised" would read as the checker's fault."""
    answers = []
    for what, grad in cases.items():
        try:
            answers.append((grad, fn(grad)))
        except Exception as error:  # the learner's code: any exception is theirs to see
            lines = str(error).splitlines() or [""]
            return failed(
                f"for {what} (on {grad.device}) your grad_check raised "
                f"{type(error).__name__}: {lines[0]}"
            )
    return answers


def _statistics(
    grad: torch.Tensor, what: str, mine: tuple, want: tuple, answers: list
) -> Verdict | None:
    """The first wrong number, named by the mistake it matches; a mistake that matches the
    learner's numbers on every case (`answers`: each gradient and the learner's pair) first."""
    if not close(mine[0], want[0]) and close(mine[0], want[1]) and close(mine[1], want[0]):
        return failed(
            f"for {what} your pair is in the wrong order: (max |grad|, zero fraction)",
            f"({mine[0]:.6g}, {mine[1]:.6g})",
            "(max |grad|, zero fraction)",
        )
    g = grad.cpu()
    for label, value, right, mistakes in (
        ("max |grad|", mine[0], want[0], MAX_MISTAKES),
        ("zero fraction", mine[1], want[1], ZERO_MISTAKES),
    ):
        slot = 0 if mistakes is MAX_MISTAKES else 1
        ordered = sorted(mistakes, key=lambda m: not _explains(m[0], slot, answers))
        known = [(float(mistake(g)), cause) for mistake, cause in ordered]
        verdict = statistic_verdict(label, f"for {what}", value, right, known)
        if verdict is not None:
            return verdict
    return None


def _explains(mistake: Callable, slot: int, answers: list) -> bool:
    """Whether a mistake gives the learner's number on every case (two mistakes can give the
    same number on one case: a first row's and a column's zero fraction are both 0 there)."""
    return all(is_pair(got) and close(float(got[slot]), float(mistake(g))) for g, got in answers)


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
            lambda: (
                lambda g: (
                    g.abs().max().item(),
                    (g.abs() < torch.finfo(g.dtype).tiny).float().mean().item(),
                )
            ),
            lambda: lambda g: (g.norm().item(), (g == 0).float().mean().item()),
            lambda: lambda g: (g.abs().max().item(), (g == 0).sum().item() / len(g)),
            lambda: lambda g: (g.abs().max().item(), 100 * (g == 0).float().mean().item()),
            lambda: lambda g: (0.04265913367271423, 0.1087239608168602),  # printed above
            lambda: lambda g: (g.abs().max().item(), (g == 0).all(0).float().mean().item()),
            lambda: lambda g: (g[:, 0].abs().max().item(), (g == 0).float().mean().item()),
            lambda: lambda g: (g.abs().min().item(), (g == 0).float().mean().item()),
            lambda: lambda g: ((g == 0).float().mean().item(), g.abs().max().item()),
            lambda: lambda g: (g.abs().max().item(), (g[0] == 0).float().mean().item()),
            lambda: lambda g: (g.abs().max().item(), (g.half() == 0).float().mean().item()),
            lambda: lambda g: (g.abs().max().item(), (g <= 0).float().mean().item()),
            lambda: lambda g: (g.abs().max().item(), (g == 0).any(1).float().mean().item()),
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
