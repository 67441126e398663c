"""01.loss_floor and 01.floor: how low the loss could go, written as a rule, then measured.

The rule is run on datasets the learner never sees (other sizes, noise levels, no noise), and
the value the text builds on ("the run stalls some two hundred times higher") is checked on the
course's data. A wrong number is matched against the mistakes that produce it (a mean over
every element, a model that outputs zeros, a norm instead of a squared error, ...), so the
feedback names the mistake, not only the difference.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from course.exercises import Exercise, Verdict, failed, passed, register
from course.model.data import SyntheticData, make_data
from course.model.runs import dataset

STALLS_NEAR = 9.0  # the story's run, as notebook 01 prints it before the exercise


def _error(data: SyntheticData) -> torch.Tensor:
    """What a perfect model misses: each sample minus its noise-free reconstruction."""
    return data.x - data.codes @ data.features


# (cause, the number that mistake gives): matched in order when an answer is wrong
MISTAKES: tuple[tuple[str, Callable[[SyntheticData], torch.Tensor]], ...] = (
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
)


def _close(a: float, b: float) -> bool:
    """Equal up to float32 summation order (a learner may sum in another order)."""
    return abs(a - b) <= 1e-4 * abs(b) + 1e-9


def _not_a_number(got: object, where: str) -> Verdict | None:
    if isinstance(got, (int, float)) and not isinstance(got, bool):
        return None
    if isinstance(got, torch.Tensor):
        why = "a tensor: use .item() to return the number it holds"
    elif isinstance(got, str):
        why = "a string: return the number itself (format it only when printing)"
    else:
        why = "not a number"
    return failed(f"{where}you returned {why}", type(got).__name__, "float")


def _named_mistake(got: float, want: float, data: SyntheticData) -> str | None:
    for cause, mistake in MISTAKES:
        value = mistake(data).item()
        if _close(got, value) and not _close(value, want):
            return cause
    return None


# ---- 01.loss_floor ---------------------------------------------------------------------------


def _floor_cases() -> dict[str, SyntheticData]:
    return {
        "the course's data": dataset(),
        "data with 64 dimensions and 10x the noise": make_data(512, 64, 128, 4, 0.1, seed=2),
        "data without noise": make_data(256, 32, 64, 3, 0.0, seed=3),
        "data with 3 active features of 48 and noise 0.05": make_data(512, 96, 48, 3, 0.05, 4),
    }


def _check_loss_floor(fn: Callable) -> Verdict:
    cases = _floor_cases()
    answers = {}
    for what, data in cases.items():
        answers[what] = fn(data)
        verdict = _not_a_number(answers[what], f"for {what} ")
        if verdict is not None:
            return verdict
    if len(set(answers.values())) == 1:
        return failed(
            f"your function gives {answers[next(iter(cases))]} on every dataset: the floor is "
            "measured on the data it is given (their noise decides it), not remembered"
        )
    for what, data in cases.items():
        got, want = answers[what], best_possible_loss(data)
        if not _close(got, want):
            cause = _named_mistake(got, want, data) or (
                "the training loss is the squared error summed over a sample's dimensions, "
                "averaged over samples"
            )
            return failed(f"not the loss a perfect model reaches on {what}: {cause}", got, want)
    return passed(
        "a model that knew the true features would only miss the noise. Compare that floor "
        "with the loss the run stalls at."
    )


def _reference_loss_floor():
    def best_possible_loss(data):
        perfect = data.codes @ data.features  # every sample rebuilt from its true features
        return (data.x - perfect).pow(2).sum(-1).mean().item()

    return best_possible_loss


# the notebook's name for it, so the references (and solution(...)) read as its cells
best_possible_loss = _reference_loss_floor()


def _wrong_floor(mistake: int):
    """A learner's function that makes MISTAKES[mistake]."""

    def best_possible_loss(data):
        return MISTAKES[mistake][1](data).item()

    return best_possible_loss


register(
    Exercise(
        name="01.loss_floor",
        prompt="Write best_possible_loss(data) -> float: the training loss of a model that "
        "rebuilds every sample exactly from its true features (data.codes @ data.features).",
        checker=_check_loss_floor,
        hint="The training loss is (reconstruction - x).pow(2).sum(-1).mean(): squared error "
        "summed over each sample's dimensions, then averaged over samples.",
        reference=_reference_loss_floor,
        wrong_answers=(
            *(lambda i=i: _wrong_floor(i) for i in range(len(MISTAKES))),
            lambda: lambda data: 0.0384,
            lambda: lambda data: _error(data).pow(2).sum(-1).mean(),
        ),
    )
)

# ---- 01.floor --------------------------------------------------------------------------------


def _rounded(got: float, want: float, places: range) -> int | None:
    """The number of decimals `got` is `want` rounded to, if it is."""
    return next((n for n in places if got == round(want, n)), None)


def _check_floor(floor: object) -> Verdict:
    verdict = _not_a_number(floor, "")
    if verdict is not None:
        return verdict
    want = best_possible_loss(dataset())
    if _close(floor, want) or _rounded(floor, want, range(3, 10)) is not None:
        return passed(
            f"the course's data cannot be fit below {want:.4f}: the noise. The run stalls "
            f"near {STALLS_NEAR:.0f}, some {STALLS_NEAR / want:.0f} times higher."
        )
    if floor == 0:
        cause = (
            "a loss of 0 would mean rebuilding the noise too: a perfect model rebuilds "
            "data.codes @ data.features, and misses the noise"
        )
    elif (places := _rounded(floor, want, range(3))) is not None:
        cause = (
            f"that is the floor rounded to {places} decimals, too coarse to compare: keep the "
            "full value (round only when printing)"
        )
    else:
        cause = _named_mistake(floor, want, dataset())
    if cause is None and floor > 1:
        cause = (
            "that is a loss a model in training reaches, like where the run stalls (near "
            f"{STALLS_NEAR:.0f}): the floor is the loss of a perfect model"
        )
    return failed(
        "not the floor of the course's data, best_possible_loss(dataset()): "
        + (cause or "measure it with your function on dataset()"),
        floor,
        "the loss of a perfect model on dataset()",
    )


def _reference_floor():
    floor = best_possible_loss(dataset())
    return floor


register(
    Exercise(
        name="01.floor",
        prompt="Measure floor = best_possible_loss(dataset()): the loss of a perfect model on "
        "the course's data, as a number.",
        checker=_check_floor,
        hint="Call your best_possible_loss on dataset(), the data the run trains on; keep the "
        "number as it comes (round only when you print it).",
        reference=_reference_floor,
        wrong_answers=(
            lambda: _error(dataset()).pow(2).mean().item(),
            lambda: dataset().x.pow(2).sum(-1).mean().item(),
            lambda: 0.0,
            lambda: round(best_possible_loss(dataset()), 2),
            lambda: _error(dataset()).pow(2).sum(-1).mean(),
            lambda: f"{best_possible_loss(dataset()):.3f}",
            lambda: 8.8,
            lambda: _error(dataset()).norm(dim=-1).mean().item(),
        ),
        answer_words=("0.038", "0.0383"),
    )
)
