"""01.frozen_names: which parameters a training run left bitwise equal, compared before and after.

Checked on runs where the answer differs (a later profile, the CPU, a run that trains only the
decoder, a learning rate that moves weights by a float32 step) and on hand-made "runs" that only
an exact, whole-tensor comparison notices (two values swapped, a change that keeps the sum, NaN,
1e-38 from 0, one float32 step of the largest weight). `train` returns nothing to read, so the
course's record of what froze cannot stand in for the comparison, and the model handed over must
be the one that trained.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

import torch

from course import emps
from course.errors import CourseError
from course.exercises import Exercise, Verdict, failed, passed, register
from course.model.runs import dataset, fresh_model, trainer
from course.model.sae import TopKSAE
from course.story.exercises.snapshot import LATER, SMALL, Layout, layout, left_alone, moved, values


@dataclass(frozen=True)
class Case:
    """A hidden run: the model, what trains it, and why a right answer must get it right.

    `subtle`: only an exact comparison of whole tensors sees what this run changed. `story`:
    the story's profile and init, whose answer 01.frozen measures next, so a miss on it does
    not show the expected names."""

    what: str
    make: Callable[[], TopKSAE]
    train: Callable[[TopKSAE], object]
    why: str = ""
    subtle: bool = False
    story: bool = False


def _decoder_only(model: TopKSAE) -> None:
    """Training on a later profile that updates only the decoder (its optimizer holds no more)."""
    x = dataset(d_model=model.encoder.weight.shape[1]).x[:64]
    with emps.use_profile(LATER):
        x = x.to(next(model.parameters()).device)
        opt = torch.optim.Adam(model.decoder.parameters(), lr=1e-3)
        for _ in range(2):
            opt.zero_grad()
            (model(x) - x).pow(2).sum(-1).mean().backward()
            opt.step()


def _step_largest(model: TopKSAE) -> None:
    weight = model.decoder.weight
    where = torch.unravel_index(weight.abs().argmax(), weight.shape)
    weight[where] = torch.nextafter(weight[where], torch.tensor(float("inf")))


def _small_cpu() -> TopKSAE:
    return fresh_model(device="cpu", **SMALL)


def _by_hand(what: str, change: Callable[[TopKSAE], object], why: str) -> Case:
    """A "run" that edits a small CPU model by hand: what only an exact comparison can see."""

    def train(model: TopKSAE) -> None:
        with torch.no_grad():
            change(model)

    return Case(what, _small_cpu, train, why, subtle=True)


GIVEN = "the answer must come from the run you were given"
ONLY_THE_RUN = "only the run can say what moved: compare before and after"
CASES = (
    Case(
        "the story's profile, a smaller model",
        lambda: fresh_model(**SMALL),
        trainer(steps=3),
        GIVEN,
        story=True,
    ),
    Case(
        f"a later profile ({LATER.name})",
        lambda: fresh_model(LATER),
        trainer(LATER, steps=3),
        f"on this profile every weight trains: {GIVEN}, not from the story",
    ),
    Case("the CPU", _small_cpu, trainer(steps=3), f"on the CPU every weight trains: {GIVEN}"),
    Case(
        "the same values built another way",
        lambda: fresh_model(init="contiguous", **SMALL),
        trainer(steps=3),
        ONLY_THE_RUN,
    ),
    Case(
        "another seed",
        lambda: fresh_model(seed=11, **SMALL),
        trainer(steps=3, seed=11),
        ONLY_THE_RUN,
        story=True,
    ),
    Case(
        "a later profile with lr = 1e-8 (weights move by a float32 step or two)",
        lambda: fresh_model(LATER, **SMALL),
        trainer(LATER, steps=1, lr=1e-8),
        "close is not equal: a weight that moved by one float32 step has moved, and a summary "
        "of it (its norm, its largest value) may not change at all. Compare whole tensors "
        "exactly (torch.equal)",
        subtle=True,
    ),
    Case(
        "a run whose optimizer only holds the decoder",
        lambda: fresh_model(LATER, **SMALL),
        _decoder_only,
        "only the decoder trained, so the encoder's weight and its bias both "
        "stayed: every parameter counts, biases too",
    ),
    _by_hand(
        "a run that swapped two values in the last row of encoder.weight",
        lambda m: m.encoder.weight[-1, -2:].copy_(m.encoder.weight[-1, -2:].flip(0).clone()),
        "the same values in other places are another tensor: a sum, sorted values or the "
        "first elements cannot see that. Compare whole tensors (torch.equal)",
    ),
    _by_hand(
        "a run that moved encoder.bias up by 0.5 in one place and down by 0.5 in another",
        lambda model: model.encoder.bias[:2].add_(torch.tensor([0.5, -0.5])),
        "its sum and its mean stayed exactly the same, its values did not. Compare whole "
        "tensors (torch.equal)",
    ),
    _by_hand(
        "a run that diverged: NaN at the end of decoder.weight",
        lambda model: model.decoder.weight[-1, -3:].fill_(float("nan")),
        "NaN equals nothing, itself included: a weight that turned NaN has moved. A test for "
        "'no difference above 0' reads NaN as unchanged; torch.equal does not",
    ),
    _by_hand(
        "a run that moved one value of encoder.bias from 0 to about 1e-38",
        lambda model: model.encoder.bias[:1].fill_(torch.finfo(torch.float32).tiny),
        "a value that moved by 1e-38 has moved: any tolerance, however small, reads it as "
        "still, and so does a squared difference (1e-38 squared rounds to 0 in float32). "
        "Compare exactly (torch.equal)",
    ),
    _by_hand(
        "a run that moved decoder.weight's largest value by one float32 step",
        _step_largest,
        "one float32 step is a relative change of about 1e-7, so a relative tolerance "
        "(rtol) reads it as still: moved is moved. Compare exactly (torch.equal)",
    ),
)


def frozen_names(model: TopKSAE, train: Callable[[TopKSAE], object]) -> list[str]:
    """The truth: the parameters `train(model)` left bitwise equal to their values before."""
    before = values(model)
    train(model)
    after = values(model)
    return [name for name in before if torch.equal(before[name], after[name])]


@functools.cache
def expected(index: int) -> tuple[str, ...]:
    """The names frozen by hidden run `index`, measured once per process."""
    case = CASES[index]
    return tuple(sorted(frozen_names(case.make(), case.train)))


class _NothingToRead:
    """What train(model) returns in a hidden run: nothing; the model itself holds the answer.

    The course's trainer() returns a History whose `.frozen` is this exercise's answer, computed
    by the course: a function that reads it would pass without comparing anything."""

    def __getattr__(self, name: str) -> NoReturn:
        raise CourseError(
            f"train(model) returns nothing to read here (your function asked for its .{name}): "
            "it trains the model in place, and the answer must come from the model's "
            "parameters, compared before and after"
        )


def _counted(train: Callable[[TopKSAE], object], calls: list[int]) -> Callable:
    def counted_train(model: TopKSAE) -> _NothingToRead:
        calls.append(1)
        train(model)
        return _NothingToRead()

    return counted_train


def _names_given(got: object, what: str) -> Verdict | None:
    if isinstance(got, (list, tuple, set)) and all(isinstance(n, str) for n in got):
        return None
    kinds = (
        f"a {type(got).__name__} of {', '.join(sorted({type(n).__name__ for n in got}))}"
        if isinstance(got, (list, tuple, set)) and got
        else repr(got)[:80]
    )
    return failed(
        f"return a list of parameter names (strings, as named_parameters() names them); on "
        f"{what} you returned {kinds}"
    )


def _ran_once(calls: int, what: str) -> Verdict | None:
    if calls == 0:
        return failed(
            f"on {what}, your function never called train(model): the answer must come from "
            "the run you were given. Keep a copy, call train(model) once, then compare"
        )
    if calls > 1:
        return failed(
            f"on {what}, your function called train {calls} times: call it once, between the "
            "copy before and the comparison after"
        )
    return None


def _trained_given(model: TopKSAE, then: Layout, before: dict, want: list[str], what: str):
    """Why the model handed to the learner's function is not the one that trained, if it is not:
    a copy (or a fresh model) trained names the right tensors, but leaves the caller's model
    untrained, and the pair 01.frozen checks would be a model that never ran."""
    verdict = left_alone(model, then, f"on {what}")
    if verdict is None and set(want) != set(before) and not moved(model, before):
        return failed(
            f"on {what}, the model your function was given is still at its starting values: "
            "train(model) must train that model, in place, not a copy or another one"
        )
    return verdict


def how_many(names: list[str]) -> str:
    """A count, not the names: the names left out are the answer being measured."""
    return "a parameter" if len(names) == 1 else f"{len(names)} parameters"


def _miss(got: list[str], want: list[str], names: list[str], case: Case) -> Verdict:
    """Why the names are wrong: views, the inverse, a frozen tensor left out, or the case's own
    reason (a tolerance, a partial comparison, NaN) for a moved tensor read as frozen."""
    missing = sorted(set(want) - set(got))
    if not case.subtle and got == sorted(names):
        cause = (
            "every parameter reads as frozen, even those that trained: the values you compare "
            "with are the trained ones. Either they were taken after train(model), or they "
            "changed with the model (state_dict() and .detach() share the parameters' memory). "
            "Keep a copy (.clone()) before calling train(model)"
        )
    elif want and got == sorted(set(names) - set(want)):
        cause = "those are the parameters that moved: the question is which did not"
    elif missing and set(got) <= set(want):
        which = how_many(missing) if case.story else str(missing)
        cause = (
            f"your list misses {which}, bitwise equal to its value before training: every "
            "parameter counts, biases too, each compared whole (torch.equal)"
        )
    else:
        cause = case.why
    shown = "not shown: it is what 01.frozen measures next" if case.story else want
    return failed(
        f"on {case.what}, not the parameters left bitwise equal to their initial values: {cause}",
        got,
        shown,
    )


def _on(index: int, case: Case, fn: Callable) -> Verdict | None:
    """The learner's frozen_names on one hidden run: its names, its calls of train, the model."""
    calls: list[int] = []
    model = case.make()
    then, before = layout(model), values(model)
    got = fn(model, _counted(case.train, calls))
    want = list(expected(index))
    verdict = _names_given(got, case.what) or _ran_once(len(calls), case.what)
    verdict = verdict or _trained_given(model, then, before, want, case.what)
    if verdict is None and sorted(got) != want:
        return _miss(sorted(got), want, list(before), case)
    return verdict


def _check_frozen_names(fn: Callable) -> Verdict:
    verdict = next(filter(None, (_on(i, case, fn) for i, case in enumerate(CASES))), None)
    return verdict or passed(
        "your check follows the run: on every hidden run it names exactly the tensors left "
        "bitwise unchanged, and no others. Now measure the story's own run with it."
    )


register(
    Exercise(
        name="01.frozen_names",
        prompt="Write frozen_names(model, train) -> list of the parameter names that "
        "`train(model)` left bitwise equal to their values before training.",
        checker=_check_frozen_names,
        hint="Take a snapshot (a copy!) before you train the model, then compare each parameter "
        "with torch.equal: 'frozen' means equal to the last bit, not 'close'.",
        minutes=8,
    )
)
