"""01.loss_floor and 01.floor: how low the loss could go, written as a rule, then measured.

The rule is run on datasets the learner never sees (other sizes, noise levels, no noise, the
course's sizes with another noise, so a rule that assumes the noise level fails, and noise
that is not centred, so the error's variance, which leaves out its mean, fails), each on a
copy the checker compares afterwards: a function that subtracts in place is told so, since on
data it was handed by someone else it would change what they go on to use. The
value the text builds on ("the run stalls some two hundred times higher") is checked on the
course's data, unrounded, so a number typed from a printout does not pass. A wrong number is
matched against the mistakes that produce it (a mean over every element, a model that outputs
zeros, a norm instead of a squared error, rounding, ...), so the feedback names the mistake,
not only the difference.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from course.exercises import Exercise, Verdict, failed, passed, register
from course.model.data import SyntheticData, make_data
from course.model.runs import dataset

STALLS_NEAR = 9.0  # the story's run, as notebook 01 prints it before the exercise
COURSE_DATA = "the course's data"


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
CENTRED_MISTAKES: tuple[tuple[str, Callable[[SyntheticData], torch.Tensor]], ...] = (
    (_VARIANCE, lambda data: _error(data).var() * data.x.shape[1]),
    (_VARIANCE, lambda data: _error(data).var(0).sum()),
)


def _close(a: float, b: float) -> bool:
    """Equal up to float32 summation order (a learner may sum in another order)."""
    return abs(a - b) <= 1e-4 * abs(b) + 1e-9


def _not_a_number(got: object, where: str) -> Verdict | None:
    if isinstance(got, (int, float)) and not isinstance(got, bool):
        return None
    if got is None:
        why = "None: return the number (print only shows it)"
    elif isinstance(got, torch.Tensor):
        why = "a tensor: use .item() to return the number it holds"
    elif isinstance(got, (np.generic, np.ndarray)):
        why = "a NumPy value: use .item() on the tensor to return a Python float"
    elif isinstance(got, str):
        why = "a string: return the number itself (format it only when printing)"
    elif isinstance(got, (list, tuple)):
        why = "a list: return the number itself, not a container holding it"
    elif callable(got):
        why = "a function: call it (on the data) and keep the number it returns"
    else:
        why = "not a number"
    return failed(f"{where}you returned {why}", type(got).__name__, "float")


def _changed_field(now: SyntheticData, then: SyntheticData) -> str | None:
    """The first of x, features, codes whose values differ between two copies of the data."""
    return next(
        (
            f
            for f in ("x", "features", "codes")
            if not torch.equal(getattr(now, f), getattr(then, f))
        ),
        None,
    )


def _copy(data: SyntheticData) -> SyntheticData:
    return SyntheticData(data.x.clone(), data.features.clone(), data.codes.clone())


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
    """The course's data, then datasets that differ from it in noise alone, then in everything.

    Each learner's call gets a copy (`_answers`), so these are made once per process."""
    return {COURSE_DATA: dataset(), **_other_data()}


def _offset(data: SyntheticData, by: float) -> SyntheticData:
    """`data` whose every sample is moved by `by` in each dimension, which no feature explains.

    Noise whose mean is not zero: a perfect model still misses all of it, so the floor counts
    the offset, while the error's variance (its spread around its mean) leaves it out."""
    return SyntheticData(data.x + by, data.features, data.codes)


@functools.cache
def _other_data() -> dict[str, SyntheticData]:
    return {
        "the course's sizes with twice its noise": make_data(noise=0.02, seed=5),
        "data whose noise is not centred (a 0.03 offset in every dimension)": _offset(
            make_data(512, 48, 96, 4, 0.02, seed=6), 0.03
        ),
        "data with 64 dimensions and 10x the noise": make_data(512, 64, 128, 4, 0.1, seed=2),
        "data without noise": make_data(256, 32, 64, 3, 0.0, seed=3),
        "data with 3 active features of 48 and noise 0.05": make_data(512, 96, 48, 3, 0.05, 4),
    }


def _answers(fn: Callable, cases: dict[str, SyntheticData]) -> dict[str, float] | Verdict:
    """The learner's number for each dataset, each computed on a copy the checker then compares
    with the original: a function that writes into its data is told so, whatever it returns."""
    answers = {}
    for what, data in cases.items():
        given = _copy(data)
        answers[what] = got = fn(given)
        verdict = _not_a_number(got, f"for {what} ")
        if verdict is not None:
            return verdict
        field = _changed_field(given, data)
        if field is not None:
            return failed(
                f"for {what}, your function changed data.{field} in place (-=, .sub_(), "
                ".pow_()): the data belong to the caller, and dataset() is shared, so every "
                "later run in the kernel would train on what your function left. Compute with "
                "new tensors (data.x - perfect)"
            )
    return answers


def _why_not(what: str, answers: dict[str, float], data: SyntheticData, want: float) -> str:
    """The mistake that gives the learner's wrong number on one dataset, as precisely as known."""
    got = answers[what]
    others = [o for o, value in answers.items() if o != what and value == got]
    if isinstance(got, int):
        return "that is an int: int() (or //) drops the decimals; return the float"
    if len(others) == len(answers) - 1:
        return (
            f"your function gives {got} on every dataset: the floor is measured on the data it "
            "is given (their noise decides it), not remembered"
        )
    if math.isnan(got):
        return "that is NaN: a square root or a division went wrong on the way"
    if (places := _rounded(got, want, range(10))) is not None:
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


def _printed():
    def best_possible_loss(data):
        print((data.x - data.codes @ data.features).pow(2).sum(-1).mean().item())

    return best_possible_loss


def _into_the_data():
    def best_possible_loss(data):
        data.x.sub_(data.codes @ data.features)  # what is left is the noise: in place
        return data.x.pow(2).sum(-1).mean().item()

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
            lambda: lambda data: data.x.shape[1] * 0.01**2,  # the noise level make_data was given
            lambda: lambda data: round(best_possible_loss(data), 4),
            lambda: lambda data: int(best_possible_loss(data)),
            lambda: lambda data: _error(data).pow(2).sum(-1).mean().numpy(),
            _into_the_data,
            lambda: lambda data: best_possible_loss(dataset()),  # the data it is given, ignored
            lambda: lambda data: _error(data)[:256].pow(2).sum(-1).mean().item(),  # one batch
            lambda: lambda data: F.mse_loss(data.codes @ data.features, data.x).item(),
            lambda: lambda data: _error(data)[:, 0].pow(2).mean().item(),  # one dimension
            _printed,
            lambda: lambda data: (_error(data).var() * data.x.shape[1]).item(),  # noise variance
            lambda: lambda data: _error(data).var(0).sum().item(),  # each dimension's variance
        ),
    )
)

# ---- 01.floor --------------------------------------------------------------------------------


def _check_floor(floor: object) -> Verdict:
    verdict = _not_a_number(floor, "")
    if verdict is not None:
        return verdict
    want = best_possible_loss(dataset())
    places = _rounded(floor, want, range(7)) if floor != want else None
    if _close(floor, want) and places is None:
        return passed(
            f"the course's data cannot be fit below {want:.4f}: the noise. The run stalls "
            f"near {STALLS_NEAR:.0f}, some {STALLS_NEAR / want:.0f} times higher."
        )
    if floor == 0:
        cause = (
            "a loss of 0 would mean rebuilding the noise too: a perfect model rebuilds "
            "data.codes @ data.features, and misses the noise"
        )
    elif places is not None:
        cause = (
            f"that is the floor rounded to {places} decimals (as a printout shows it): keep "
            "the value your function returns, unrounded (round only when printing)"
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
            lambda: 0.0383,  # the floor as the reference's output prints it
            lambda: round(best_possible_loss(dataset()), 3),
            lambda: best_possible_loss,
            lambda: np.float32(best_possible_loss(dataset())),
            lambda: best_possible_loss(dataset(seed=1)),
            lambda: 19.0,  # the loss of step 1, printed above
            lambda: [best_possible_loss(dataset())],
            lambda: dataset().x.shape[1] * 0.01**2,
            lambda: round(best_possible_loss(dataset()), 5),  # within 1e-4 of it, still typed
        ),
        answer_words=("0.038", "0.0383"),
    )
)
