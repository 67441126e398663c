"""02.did_not_move, 02.grad_check and the 02.zero_pattern prediction: the measuring tools.

The checkers hand the learner's function made-up pairs and gradients, each built so that one
plausible shortcut gets it wrong (a one-ulp change, swapped values, NaN garbage, a largest
entry in the last row, scattered zeros), and name the shortcut when the answer matches it.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from course import emps
from course.exercises import Exercise, Prediction, Verdict, failed, register, register_prediction
from course.exercises.engine import Checking, Trial, each
from course.isolation.exercises.common import (
    SMALL,
    close,
    is_pair,
    not_a_pair,
    same_answer,
    statistic_verdict,
)
from course.isolation.experiments import ENCODER, bench

# ---- 02.did_not_move -------------------------------------------------------------------------

# Why each pair is there: what a function that gets it wrong has missed.
WHY = {
    "copy": "a snapshot is a copy: compare values, not identity or memory addresses",
    "moved": "a function that answers without comparing the values cannot tell a frozen "
    "tensor from a moving one",
    "layout": "same values, other strides: compare the values, not the layout",
    "last": "one changed element is a move: compare every element, not the first ones or a "
    "share of them",
    "large": "the encoder has 589,824 elements: compare every one of them, not the first rows "
    "or the first thousand",
    "swapped": "a sum, a mean or sorted values cannot see values that moved to other places",
    "balanced": "sums or means along rows or columns cannot see changes that cancel in them",
    "sign": "|values| (abs) are the same, the values are not: compare the values themselves",
    "nan": "NaN compares false with everything, so a test for 'a difference > 0' reads NaN "
    "garbage as unchanged, and nan_to_num turns it back into the zeros it replaced",
    "ulp": "allclose, rounding, a lower precision and every threshold hide a one-ulp change; "
    "'frozen' means bitwise equal",
    "device": "a snapshot lives on the CPU and a parameter may not: bring both to the CPU",
    "either": "either side may live on the device (a parameter before the step, say): bring "
    "both to the CPU",
    "float64": "a float64 tensor (the float64 run's encoder is one) moves by 1e-16 of a value: "
    "a tolerance, however small, or a cast to float32 hides that; compare exactly",
}


def _changed(w: torch.Tensor, index: tuple[int, int], value: float) -> torch.Tensor:
    out = w.clone()
    out[index] = value
    return out


def _pairs() -> list[tuple[str, torch.Tensor, torch.Tensor, bool, str]]:
    """(what, before, after, whether it did not move, why): each pair defeats one shortcut."""
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(6, 4, generator=gen)
    quarters = torch.randperm(24, generator=gen).reshape(6, 4) / 4.0 - 3.0  # exact sums
    swapped = _changed(_changed(quarters, (4, 1), quarters[5, 2].item()), (5, 2), quarters[4, 1])
    # +0.25 and -0.25 at the corners of a rectangle: every row and column sum stays the same
    balanced = quarters.clone()
    balanced[[1, 4], [0, 3]] += 0.25
    balanced[[1, 4], [3, 0]] -= 0.25
    # a one-ulp change far below any absolute tolerance (1e-7) and any relative one (1e-7)
    small = w * 1e-3
    small[5, 3] = 3.9e-3  # just below 2**-8, where a float32 step is 6e-8 of the value
    ulp = _changed(small, (5, 3), torch.nextafter(small[5, 3], torch.tensor(float("inf"))).item())
    large = torch.randn(1536, 384, generator=gen)  # the story's encoder size
    last_of_large = _changed(large, (1535, 383), large[1535, 383] + 0.5)
    zeroed = w.clone()
    zeroed[5] = 0.0  # a row of zeros overwritten with NaN: nan_to_num gives the zeros back
    nan = zeroed.clone()
    nan[5] = float("nan")
    fine = w.double() * 1e-3  # a float64 tensor (the float64 run's): its step is 1e-16 relative
    up = torch.nextafter(fine[2, 1], torch.tensor(float("inf"), dtype=torch.float64)).item()
    fine_up, on_device = _changed(fine, (2, 1), up), w.to(emps.DEVICE)
    stored, last = quarters.t().contiguous().t(), _changed(w, (5, 3), w[5, 3] + 0.5)
    sign = _changed(quarters, (3, 2), -quarters[3, 2].item() or 1.0)
    rows = [
        ("an identical copy", w, w.clone(), True, "copy"),
        ("every element changed by 1.0", w, w + 1.0, False, "moved"),
        ("the same values stored another way in memory", quarters, stored, True, "layout"),
        ("a change of 0.5 in the last element", w, last, False, "last"),
        (
            "a change of 0.5 in the last of the story's 589,824 elements",
            large,
            last_of_large,
            False,
            "large",
        ),
        ("two values swapped between positions", quarters, swapped, False, "swapped"),
        (
            "four values changed so that every row and column sum stays the same",
            quarters,
            balanced,
            False,
            "balanced",
        ),
        ("one element's sign flipped", quarters, sign, False, "sign"),
        ("a last row of zeros overwritten with NaN", zeroed, nan, False, "nan"),
        ("one element moved to the next float32 value", small, ulp, False, "ulp"),
        ("an identical copy on the emulated device", w, on_device, True, "device"),
        (
            "a tensor on the emulated device and its identical copy on the CPU",
            on_device,
            w,
            True,
            "either",
        ),
        (
            "one element of a float64 tensor moved to the next float64 value",
            fine,
            fine_up,
            False,
            "float64",
        ),
    ]
    return [(what, a, b, frozen, WHY[why]) for what, a, b, frozen, why in rows]


def _bits(t: torch.Tensor) -> torch.Tensor:
    """A tensor's bit patterns (int32 words) on the CPU: NaN equals itself here, as memory does."""
    return t.detach().cpu().contiguous().view(torch.int32).clone()


WROTE = object()  # what a function that wrote into its inputs gave, whatever it returned


def _compare(fn: Callable, pair: tuple) -> object:
    """The learner's answer on one pair, or WROTE when it changed either tensor."""
    before, after = pair[1], pair[2]
    kept = _bits(before), _bits(after)
    got = fn(before, after)
    unchanged = torch.equal(_bits(before), kept[0]) and torch.equal(_bits(after), kept[1])
    return got if unchanged else WROTE


def _pair_miss(trial: Trial) -> Verdict:
    what, why, got = trial.case[0], trial.case[4], trial.got
    if isinstance(trial.error, RuntimeError):
        raised = f"{type(trial.error).__name__}: {str(trial.error).splitlines()[0]}"
        return failed(f"for {what} your function raised {raised}; {why}")
    if trial.error is not None:  # not a comparison's failure: `check` says what it raised
        raise trial.error
    if got is WROTE:
        return failed(
            f"for {what} your function changed its inputs: a check must only read them "
            "(`.cpu()` of a CPU tensor is the tensor itself, so an in-place op on it writes "
            "into the snapshot). Compare without writing: torch.equal."
        )
    if not isinstance(got, bool):
        message = f"return a bool (True = did not move); for {what} you returned {got!r}"
        return failed(message, type(got).__name__, "bool")
    return failed(f"wrong for {what}: {why}", got, trial.expected)


register(
    Exercise(
        name="02.did_not_move",
        prompt="Write did_not_move(before, after) -> bool: True only if no element changed at all.",
        checker=Checking(
            cases=_pairs,
            run=_compare,
            expect=lambda pair: pair[3],
            agree=lambda got, frozen: got is frozen,  # a bool, and the right one
            label=lambda pair: pair[0],
            success=lambda n: "exact equality, to the last bit: that is what 'frozen' means.",
            diagnoses=(each(_pair_miss),),
        ),
        hint="'Close' is not 'equal': allclose hides a one-ulp change. Use an exact comparison "
        "(on the CPU: a tensor on another device is never equal to a CPU one).",
        minutes=5,
    )
)

# ---- 02.grad_check ---------------------------------------------------------------------------


def _grad_cases() -> list[tuple[str, torch.Tensor]]:
    """Real gradients of the story's model and of a smaller one, on the emulated device, and
    made-up ones that each defeat a shortcut."""
    cases = []
    for label, settings in (("the story's", {}), ("a smaller model's", {"seed": 5, **SMALL})):
        b = bench(**settings)
        b.backward()
        for name in ("encoder.weight", "decoder.weight"):
            cases.append((f"{label} {name} gradient", b.parameter(name).grad))
    gen = torch.Generator().manual_seed(1)
    tiny = torch.randn(8, 5, generator=gen) * 1e-12  # small, but not one of them is zero
    mostly_negative = -torch.rand(8, 5, generator=gen) - 0.5
    mostly_negative[3] = 0.0
    largest_last = torch.rand(8, 5, generator=gen)
    largest_last[7, 4] = 9.0
    scattered = torch.randn(8, 5, generator=gen) * (torch.rand(8, 5, generator=gen) > 0.3)
    signs = torch.randint(0, 2, (8, 5), generator=gen) * 2 - 1
    subnormal = signs * (torch.rand(8, 5, generator=gen) + 0.5) * 1e-40  # below finfo.tiny
    return cases + [
        ("a gradient whose largest entries are negative", mostly_negative),
        ("a gradient whose largest entry is in its last row", largest_last),
        ("a gradient whose zeros are scattered, not whole rows", scattered),
        ("a gradient of tiny (1e-12) but non-zero values", tiny),
        ("a gradient of subnormal (1e-40) but non-zero values", subnormal),
        ("a gradient with some -0.0 entries", torch.tensor([[0.5, -0.0], [0.0, -2.0]])),
    ]


# What a wrong statistic computes, and what it misses: checked against a learner's number.
LARGEST, EVERY, COUNT = "the question is the largest one", "look at every element", "count the"
MAX_MISTAKES = (
    (
        lambda g: g.max(),
        "that is the largest signed value: a large negative gradient is large too, so take the "
        "absolute value first",
    ),
    (lambda g: g[0].abs().max(), f"that is the first row's largest: {EVERY}"),
    (lambda g: g[:, 0].abs().max(), f"that is the first column's largest: {EVERY}"),
    (lambda g: g.abs().mean(), f"that is the mean magnitude: {LARGEST}"),
    (lambda g: g.norm(), f"that is the norm (all elements together): {LARGEST}"),
    (lambda g: g.abs().min(), f"that is the smallest magnitude: {LARGEST}"),
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
        lambda g: (g == 0).all(1).float().mean(),
        f"that is the fraction of rows that are all zero: {COUNT} elements",
    ),
    (
        lambda g: (g == 0).all(0).float().mean(),
        f"that is the fraction of columns that are all zero: {COUNT} elements",
    ),
    (
        lambda g: (g[0] == 0).float().mean(),
        f"that is the first row's zero fraction: {COUNT} zeros among every element",
    ),
    (
        lambda g: (g.half() == 0).float().mean(),
        "that counts values too small for float16 as zeros: compare the gradient itself, in its "
        "own dtype, with 0",
    ),
    (
        lambda g: (g <= 0).float().mean(),
        "that counts the negative values too: exactly zero is == 0",
    ),
    (
        lambda g: (g == 0).any(1).float().mean(),
        f"that is the fraction of rows with a zero in them: {COUNT} elements",
    ),
)


SLOTS = (("max |grad|", MAX_MISTAKES), ("zero fraction", ZERO_MISTAKES))


def _grad_check(grad: torch.Tensor) -> tuple[float, float]:
    """The truth: max |grad| (the infinity norm) and the fraction of exact zeros (those
    count_nonzero leaves out), computed unlike the notebook's answer, which the student release
    must not hold. The checker compares to 1e-6, far above float32's rounding of a mean."""
    g = grad.detach().cpu()
    zeros = g.numel() - torch.count_nonzero(g).item()
    return torch.linalg.vector_norm(g, float("inf")).item(), zeros / g.numel()


def _grad_misses(trials: list[Trial]) -> Verdict | None:
    """The first gradient the function raised on; else, case by case, a pair that is not one,
    numbers that did not follow the gradient, or the first wrong number by its mistake."""
    raised = next((t for t in trials if t.error is not None), None)
    if raised is not None:
        lines = str(raised.error).splitlines() or [""]
        return failed(
            f"for {raised.label} (on {raised.case[1].device}) your grad_check raised "
            f"{type(raised.error).__name__}: {lines[0]}"
        )
    seen: dict = {}  # a learner's pair -> where, and the right pair
    for trial in trials:
        what, want, got = f"for {trial.label}", trial.expected, trial.got
        if not is_pair(got):
            return not_a_pair(what, got, "max |grad|, fraction of exact zeros")
        mine = (float(got[0]), float(got[1]))
        verdict = same_answer(seen, mine, what, want, "`grad`")
        if verdict := verdict or _statistics(trial.case[1], what, mine, want, trials):
            return verdict
    return None


def _statistics(
    grad: torch.Tensor, what: str, mine: tuple, want: tuple, trials: list[Trial]
) -> Verdict | None:
    """The first wrong number, named by the mistake it matches; a mistake that matches the
    learner's numbers on every case first."""
    if not close(mine[0], want[0]) and close(mine[0], want[1]) and close(mine[1], want[0]):
        order, yours = "(max |grad|, zero fraction)", f"({mine[0]:.6g}, {mine[1]:.6g})"
        return failed(f"{what} your pair is in the wrong order: {order}", yours, order)
    g = grad.cpu()
    for slot, (label, mistakes) in enumerate(SLOTS):
        ordered = sorted(mistakes, key=lambda m: not _explains(m[0], slot, trials))
        known = [(float(mistake(g)), cause) for mistake, cause in ordered]
        verdict = statistic_verdict(label, what, mine[slot], want[slot], known)
        if verdict is not None:
            return verdict
    return None


def _explains(mistake: Callable, slot: int, trials: list[Trial]) -> bool:
    """Whether a mistake gives the learner's number on every case (two mistakes can give the
    same number on one case: a first row's and a column's zero fraction are both 0 there)."""
    return all(
        is_pair(t.got) and close(float(t.got[slot]), float(mistake(t.case[1]))) for t in trials
    )


def _pair_agrees(got: object, want: tuple[float, float]) -> bool:
    return is_pair(got) and all(close(float(g), w) for g, w in zip(got, want, strict=True))


register(
    Exercise(
        name="02.grad_check",
        prompt="Write grad_check(grad) -> (max |grad|, fraction of elements exactly zero).",
        checker=Checking(
            cases=_grad_cases,
            run=lambda fn, case: fn(case[1]),
            expect=lambda case: _grad_check(case[1]),
            agree=_pair_agrees,
            label=lambda case: case[0],
            success=lambda n: (
                "max |grad| and the fraction of exact zeros, right on real and made-up gradients."
            ),
            diagnoses=(_grad_misses,),
        ),
        hint="Largest magnitude: the largest absolute value. Zero fraction: count the elements "
        "equal to 0 (exactly, not 'small'), divided by the number of elements.",
        minutes=6,
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
