"""01.frozen and the 01.how_many_frozen prediction: the names the text builds on, measured.

The names are checked against the model they were measured on, and that model against the
story's run redone by the checker (on one thread, up to the rounding another thread count
gives): the same names from 2 steps or another learning rate come from another run.
"""

from __future__ import annotations

import functools

import torch

from course.devices import pinned_threads
from course.exercises import Exercise, Prediction, Verdict, failed, passed
from course.exercises.registry import register, register_prediction
from course.model.runs import fresh_model, trainer
from course.model.sae import TopKSAE
from course.story.exercises.frozen_names import frozen_names, how_many
from course.story.exercises.snapshot import values

STORY_STEPS = 30  # trainer(steps=30), as 01.frozen's prompt names it
AS_THE_RUN = 5e-3  # of what training moved each tensor: thread counts differ by ~1e-6 of it


@functools.cache
def _story_start() -> tuple[dict[str, torch.Tensor], tuple[int, ...]]:
    """fresh_model()'s starting values, and its encoder weight's strides."""
    model = fresh_model()
    return values(model), model.encoder.weight.stride()


@functools.cache
def _story_end() -> dict[str, torch.Tensor]:
    """fresh_model()'s values after trainer(steps=30): where the story's run takes them."""
    model = fresh_model()
    with pinned_threads(1):
        trainer(steps=STORY_STEPS)(model)
    return values(model)


def _story_model(model: TopKSAE) -> Verdict | None:
    """The story's model, fresh_model() as it comes: on the emulated device, its sizes."""
    start, strides = _story_start()
    where = next(model.parameters()).device.type
    if where != "emps":
        return failed(
            f"your model lives on {where}: the run the text builds on is the story's, on the "
            "emulated device (fresh_model() as it comes)",
            where,
            "emps",
        )
    shapes = {n: list(p.shape) for n, p in model.named_parameters()}
    if shapes != {n: list(t.shape) for n, t in start.items()}:
        return failed(
            "your model has other sizes than the story's: measure fresh_model() as it comes",
            shapes,
        )
    if model.encoder.weight.stride() != strides:
        return failed(
            "your model was built with another init than the story's: measure fresh_model() "
            "as it comes"
        )
    return None


def _off_the_run(now: dict[str, torch.Tensor]) -> bool:
    """Whether a trained tensor in `now` is not where trainer(steps=30) takes it.

    Another thread count rounds each step's sums in another order, which moves the result by
    about a millionth of what training moved it; one step more or less, or a learning rate 1%
    off, moves it by a hundredth or more."""
    start, end = _story_start()[0], _story_end()
    return any(
        (now[n] - there).norm().item() > AS_THE_RUN * (there - start[n]).norm().item()
        for n, there in end.items()
    )


def _frozen_given(frozen: object, names: list[str]) -> Verdict | None:
    if isinstance(frozen, int) and not isinstance(frozen, bool):
        return failed("frozen is a count: give the names (a list of parameter names)", frozen)
    if isinstance(frozen, str):
        return failed("frozen is one string: give a list of names (a list, even of one)", frozen)
    if not isinstance(frozen, (list, tuple, set)) or not all(isinstance(n, str) for n in frozen):
        return failed("frozen must be a list of parameter names", type(frozen).__name__)
    unknown = sorted(set(frozen) - set(names))
    if unknown:
        return failed(f"{unknown} are not parameter names of the model", unknown, names)
    return None


def _trained(unchanged: list[str], names: list[str]) -> Verdict | None:
    """Why the model did not train as the story's does: not at all, or every weight moved."""
    if unchanged == names:
        return failed(
            "your model is still at its starting values: it never trained. Your frozen_names "
            "must train the model it is given (train(model), not a copy of it), and you hand "
            "over that model: model = fresh_model(), then frozen = frozen_names(model, "
            "trainer(steps=30))"
        )
    if not unchanged:
        return failed(
            "no parameter of your model is still at fresh_model()'s starting values: it "
            "started elsewhere (another seed) or trained where every weight moves (another "
            "profile, the CPU, another optimizer such as SGD). The run the text builds on is "
            "fresh_model() trained by trainer(steps=30), both as they come"
        )
    return None


def _names_of(frozen: list[str], unchanged: list[str]) -> Verdict | None:
    """Why the names are not those of the model's unchanged tensors (a count for those missed)."""
    moved, kept = sorted(set(frozen) - set(unchanged)), sorted(set(unchanged) - set(frozen))
    if not (moved or kept):
        return None
    parts = [f"lists {moved}, which moved on your model"] if moved else []
    parts += [f"misses {how_many(kept)} still bitwise at its starting value"] if kept else []
    return failed(
        f"your frozen {' and '.join(parts)}: check your frozen_names first "
        "(check('01.frozen_names', frozen_names))",
        sorted(frozen),
    )


def _check_frozen(answer: object) -> Verdict:
    if not (isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], TopKSAE)):
        return failed(
            "give the pair (model, frozen): the model your frozen_names trained, then the "
            "names it found",
            type(answer).__name__,
            "(model, list of names)",
        )
    model, frozen = answer
    start = _story_start()[0]
    verdict = _frozen_given(frozen, list(start)) or _story_model(model)
    if verdict is not None:
        return verdict
    now = values(model)
    unchanged = sorted(n for n in start if torch.equal(start[n], now[n]))
    verdict = _trained(unchanged, sorted(start)) or _names_of(frozen, unchanged)
    if verdict is None and _off_the_run(now):
        return failed(
            "your model's trained weights are not where trainer(steps=30) takes fresh_model(): "
            "it ran another number of steps, another learning rate, batch size or seed, or "
            "trained again after your frozen_names (a second call, a rerun cell). Its frozen "
            "names may match, but the text builds on the story's run as it comes: model = "
            "fresh_model(), then frozen = frozen_names(model, trainer(steps=30)), once"
        )
    return verdict or passed(
        f"measured on the story's run: {unchanged} bitwise unchanged after training, while "
        "the rest trained."
    )


register(
    Exercise(
        name="01.frozen",
        prompt="Measure the story's run: model = fresh_model(), frozen = frozen_names(model, "
        "trainer(steps=30)); check the pair (model, frozen).",
        checker=_check_frozen,
        hint="Train fresh_model() as it comes, on the story's profile, with your frozen_names "
        "(which calls train(model) itself), and hand over that same model with its names.",
        minutes=4,
    )
)


def _count_frozen() -> str:
    return str(len(frozen_names(fresh_model(), trainer(steps=5))))


register_prediction(
    Prediction(
        "01.how_many_frozen",
        "The story's model has four parameter tensors (encoder and decoder, weight and bias). "
        "After training with a stalled loss, how many are still bitwise equal to their "
        "initial values?",
        ("0", "1", "2", "4"),
        _count_frozen,
        "One: encoder.weight, to the last bit, while its own bias and the whole decoder train. "
        "Not a learning-rate problem: no learning rate leaves a weight exactly where it was.",
        answer_words=("exactly one", "only one", "one tensor", "a single tensor"),
    )
)
