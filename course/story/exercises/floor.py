"""01.loss_floor and 01.floor: how low the loss could go, written as a rule, then measured.

The rule runs on datasets the learner never sees (other sizes and noise levels, no noise, noise
that is not centred, where the error's variance misses), each on a copy compared afterwards: a
function that subtracts in place would change its caller's data. The floor the text builds on is
checked unrounded, so a number typed from a printout does not pass. A wrong number is matched
against the mistakes that give it, so the feedback names the mistake, not only the difference.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import torch

from course.exercises import Exercise, Verdict, failed, passed, register
from course.model.data import SyntheticData, make_data
from course.model.runs import dataset

STALLS_NEAR = 9.0  # the story's run, as notebook 01 prints it before the exercise
COURSE_DATA = "the course's data"
Mistakes = tuple[tuple[str, Callable[[SyntheticData], torch.Tensor]], ...]


def _error(data: SyntheticData) -> torch.Tensor:
    """What a perfect model misses: each sample minus its noise-free reconstruction."""
    return data.x - data.codes @ data.features


def best_possible_loss(data: SyntheticData) -> float:
    """The truth: the loss of a model that rebuilds every sample from its true features."""
    return _error(data).pow(2).sum(-1).mean().item()


# (cause, the number that mistake gives): matched in order when an answer is wrong
MISTAKES: Mistakes = (
    (
        "that is the error averaged over every element, which divides by the dimensions too: "
        "sum over a sample's dimensions (.sum(-1)), then average over samples",
        lambda data: _error(data).pow(2).mean(),
    ),
    (
        "that is the loss of a model that outputs zeros: subtract the perfect reconstruction, "
        "data.codes @ data.features",
        lambda data: data.x.pow(2).sum(-1).mean(),
    ),
    (
        "that is the mean distance (a norm), not the squared error: square each error, then sum",
        lambda data: _error(data).norm(dim=-1).mean(),
    ),
    (
        "that is summed over the samples too: the loss averages over samples (.mean())",
        lambda data: _error(data).pow(2).sum(),
    ),
    (
        "that is the square root of the loss (an RMS error): the loss itself is not rooted",
        lambda data: _error(data).pow(2).sum(-1).mean().sqrt(),
    ),
    (
        "that sums absolute errors: the loss squares each error (.pow(2))",
        lambda data: _error(data).abs().sum(-1).mean(),
    ),
    (
        "that divides the total by the dimensions: the loss averages over samples, the first "
        "dimension (.sum(-1) per sample, then .mean())",
        lambda data: _error(data).pow(2).sum() / data.x.shape[1],
    ),
)

# Mistakes that subtract the error's mean, as a variance does: on centred noise they agree with
# the floor to within float32's rounding, so only the offset dataset can name them.
_VARIANCE = (
    "that is a variance (of the whole error, or of each dimension, summed), which subtracts the "
    "error's mean: the loss squares the error itself, mean included. It matched the floor where "
    "the noise averaged zero, not here"
)
CENTRED_MISTAKES: Mistakes = (
    (_VARIANCE, lambda data: _error(data).var() * data.x.shape[1]),
    (_VARIANCE, lambda data: _error(data).var(0).sum()),
)

# What a learner returns instead of a number, and what to say (first match wins).
NOT_A_NUMBER: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "None: return the number (print only shows it)"),
    (torch.Tensor, "a tensor: use .item() to return the number it holds"),
    ((np.generic, np.ndarray), "a NumPy value: use .item() on the tensor to return a Python float"),
    (str, "a string: return the number itself (format it only when printing)"),
    ((list, tuple), "a list: return the number itself, not a container holding it"),
)


def _close(a: float, b: float) -> bool:
    """Equal up to float32 summation order (a learner may sum in another order)."""
    return abs(a - b) <= 1e-4 * abs(b) + 1e-9


def _not_a_number(got: object, where: str) -> Verdict | None:
    if isinstance(got, (int, float)) and not isinstance(got, bool):
        return None
    why = next((why for kind, why in NOT_A_NUMBER if isinstance(got, kind)), None)
    if why is None and callable(got):
        why = "a function: call it (on the data) and keep the number it returns"
    return failed(f"{where}you returned {why or 'not a number'}", type(got).__name__, "float")


def _rounded(got: float, want: float, places: range) -> int | None:
    """The number of decimals `got` is `want` rounded to, if it is."""
    return next((n for n in places if got == round(want, n)), None)


def _named_mistake(got: float, want: float, data: SyntheticData) -> str | None:
    for cause, mistake in MISTAKES + CENTRED_MISTAKES:
        value = mistake(data).item()
        if _close(got, value) and not _close(value, want):
            return cause
    return None


# ---- 01.loss_floor ---------------------------------------------------------------------------


def _floor_cases() -> dict[str, SyntheticData]:
    """The course's data, then datasets that differ from it in noise alone, then in everything."""
    return {COURSE_DATA: dataset(), **_other_data()}


@functools.cache
def _other_data() -> dict[str, SyntheticData]:
    """Made once per process: each learner's call gets a copy. The offset one is noise whose mean
    is not zero: a perfect model misses all of it, the error's variance leaves the offset out."""
    offset = make_data(512, 48, 96, 4, 0.02, seed=6)
    return {
        "the course's sizes with twice its noise": make_data(noise=0.02, seed=5),
        "data whose noise is not centred (a 0.03 offset in every dimension)": SyntheticData(
            offset.x + 0.03, offset.features, offset.codes
        ),
        "data with 64 dimensions and 10x the noise": make_data(512, 64, 128, 4, 0.1, seed=2),
        "data without noise": make_data(256, 32, 64, 3, 0.0, seed=3),
        "data with 3 active features of 48 and noise 0.05": make_data(512, 96, 48, 3, 0.05, 4),
    }


def changed_field(now: SyntheticData, then: SyntheticData) -> str | None:
    """The first of x, features, codes whose values differ between two copies of the data."""
    fields = ("x", "features", "codes")
    return next((f for f in fields if not torch.equal(getattr(now, f), getattr(then, f))), None)


def _answers(fn: Callable, cases: dict[str, SyntheticData]) -> dict[str, float] | Verdict:
    """The learner's number for each dataset, each computed on a copy the checker then compares
    with the original: a function that writes into its data is told so, whatever it returns."""
    answers = {}
    for what, data in cases.items():
        given = SyntheticData(data.x.clone(), data.features.clone(), data.codes.clone())
        answers[what] = got = fn(given)
        verdict = _not_a_number(got, f"for {what} ")
        field = changed_field(given, data)
        if verdict is None and field is not None:
            verdict = failed(
                f"for {what}, your function changed data.{field} in place (-=, .sub_(), "
                ".pow_()): the data belong to the caller, and dataset() is shared, so every "
                "later run in the kernel would train on what your function left. Compute with "
                "new tensors (data.x - perfect)"
            )
        if verdict is not None:
            return verdict
    return answers


def _why_not(what: str, answers: dict[str, float], data: SyntheticData, want: float) -> str:
    """The mistake that gives the learner's wrong number on one dataset, as precisely as known."""
    got = answers[what]
    others = [o for o, value in answers.items() if o != what and value == got]
    places = _rounded(got, want, range(10))
    if isinstance(got, int):
        return "that is an int: int() (or //) drops the decimals; return the float"
    if len(others) == len(answers) - 1:
        return (
            f"your function gives {got} on every dataset: the floor is measured on the data it "
            "is given (their noise decides it), not remembered"
        )
    if math.isnan(got):
        return "that is NaN: a square root or a division went wrong on the way"
    if places is not None:
        return (
            f"your function rounds the loss to {places} decimals: return it as it comes (round "
            "only when printing)"
        )
    named = _named_mistake(got, want, data)
    if named is not None:
        return named
    if others:
        return (
            f"your function gives the same number on {others[0]}, whose floor is another: it "
            "must measure the error in the data it is given, not compute it from their sizes "
            "or an assumed noise level"
        )
    return (
        "the training loss is the squared error summed over all of a sample's dimensions, "
        "averaged over all samples"
    )


def _check_loss_floor(fn: Callable) -> Verdict:
    cases = _floor_cases()
    answers = _answers(fn, cases)
    if isinstance(answers, Verdict):
        return answers
    for what, data in cases.items():
        got, want = answers[what], best_possible_loss(data)
        if not _close(got, want):
            cause = _why_not(what, answers, data, want)
            # the course's floor is 01.floor's answer: shown here, it could be typed in there
            shown = "01.floor's answer: measure it next" if what == COURSE_DATA else want
            return failed(f"not the loss a perfect model reaches on {what}: {cause}", got, shown)
    return passed(
        "a model that knew the true features would only miss the noise. Compare that floor "
        "with the loss the run stalls at."
    )


register(
    Exercise(
        name="01.loss_floor",
        prompt="Write best_possible_loss(data) -> float: the training loss of a model that "
        "rebuilds every sample exactly from its true features (data.codes @ data.features).",
        checker=_check_loss_floor,
        hint="The training loss is (reconstruction - x).pow(2).sum(-1).mean(): squared error "
        "summed over each sample's dimensions, then averaged over samples.",
        minutes=8,
    )
)

# ---- 01.floor --------------------------------------------------------------------------------


def _why_not_the_floor(floor: float, want: float) -> str:
    """The mistake that gives a wrong floor: zero, rounding, a named mistake, a training loss."""
    places = _rounded(floor, want, range(7)) if floor != want else None
    if floor == 0:
        return (
            "a loss of 0 would mean rebuilding the noise too: a perfect model rebuilds "
            "data.codes @ data.features, and misses the noise"
        )
    if places is not None:
        return (
            f"that is the floor rounded to {places} decimals (as a printout shows it): keep "
            "the value your function returns, unrounded (round only when printing)"
        )
    cause = _named_mistake(floor, want, dataset())
    if cause is None and floor > 1:
        cause = (
            "that is a loss a model in training reaches, like where the run stalls (near "
            f"{STALLS_NEAR:.0f}): the floor is the loss of a perfect model"
        )
    return cause or "measure it with your function on dataset()"


def _check_floor(floor: object) -> Verdict:
    want = best_possible_loss(dataset())
    verdict = _not_a_number(floor, "")
    if verdict is not None:
        return verdict
    if _close(floor, want) and (floor == want or _rounded(floor, want, range(7)) is None):
        return passed(
            f"the course's data cannot be fit below {want:.4f}: the noise. The run stalls "
            f"near {STALLS_NEAR:.0f}, some {STALLS_NEAR / want:.0f} times higher."
        )
    return failed(
        "not the floor of the course's data, best_possible_loss(dataset()): "
        + _why_not_the_floor(floor, want),
        floor,
        "the loss of a perfect model on dataset()",
    )


register(
    Exercise(
        name="01.floor",
        prompt="Measure floor = best_possible_loss(dataset()): the loss of a perfect model on "
        "the course's data, as a number.",
        checker=_check_floor,
        hint="Call your best_possible_loss on dataset(), the data the run trains on; keep the "
        "number as it comes (round only when you print it).",
        minutes=2,
        answer_words=("0.038", "0.0383"),
    )
)
