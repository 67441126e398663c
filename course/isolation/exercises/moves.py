"""02.encoder_moves: which optimizer moves the encoder, run on hidden benches and read from the
bench's step log as much as from the answer."""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from course.exercises import Exercise, Verdict, failed, passed, register
from course.isolation import experiments
from course.isolation.exercises.common import (
    LATER,
    MADE_UP,
    SMALL,
    Variant,
    require_bool,
    stepped_other,
    stepped_outside,
    unprepared_step,
    watched,
)
from course.isolation.exercises.stepping import sgd_step
from course.isolation.experiments import ENCODER, Bench

VARIANTS = (
    Variant(
        "the story's bench with torch.optim.SGD at lr 0.01",
        "SGD updates the encoder",
        update=experiments.sgd,
        optimizer="SGD",
        lr=1e-2,  # the update's settings vary too: an experiment must step the one given
    ),
    Variant("the story's bench with Adam", "this is the story's observation"),
    Variant(
        "the story's bench with a manual SGD step",
        "a hand-written step must move the encoder as torch's SGD does",
        update=lambda lr: functools.partial(sgd_step, lr=lr),
        optimizer=None,
    ),
    Variant(
        f"a later profile ({LATER.name}) with Adam",
        "on a fixed profile Adam moves the encoder: an experiment that says otherwise "
        "remembers the story instead of measuring the bench",
        {"profile": LATER},
    ),
    Variant(
        "the CPU with Adam",
        "the CPU is the control: the same model and optimizer train there",
        {"device": "cpu"},
    ),
    Variant(
        "another seed and smaller sizes, with Adam",
        "the conclusion must not depend on one seed or on the story's shapes",
        {"seed": 3, **SMALL},
    ),
    Variant(
        "a later profile, a batch of one sample, Adam at lr = 1e-8",
        "one sample uses only k features, so only k rows of the encoder get a gradient, each "
        "moving by a float32 step or two: a sum, the first rows or allclose all miss that",
        {"profile": LATER, "batch_size": 1, **SMALL},
        lr=1e-8,
    ),
    Variant(
        "the same values initialised another way, on the story's profile, with Adam",
        # "contiguous" is not named here: that would answer 02.contiguous, predicted later
        "whether these values move is a fact about the bench, measured, not the story remembered",
        {"init": "contiguous", **SMALL},
    ),
    Variant(
        f"{MADE_UP.label}, with Adam",
        "here Adam's state and the weights disagree: whether the encoder moved is read from "
        "its snapshots, not from a proxy such as exp_avg_sq, the loss or the optimizer's kind",
        {"profile": MADE_UP, "seed": 2, **SMALL},
    ),
    Variant(
        "a later profile, one sample that keeps a single feature (k = 1), its first 48 "
        "inputs zero, with Adam",
        "one feature and 16 inputs: 16 of the encoder's 16,384 elements move, in one row (an "
        "odd one) and the last columns. Compare every element, not every other row, the first "
        "rows or the first columns",
        {"profile": LATER, "batch_size": 1, "seed": 1, **SMALL, "k": 1},
        zero_columns=48,
    ),
)


def moved(b: Bench, update: experiments.Update) -> bool:
    """The truth: one backward and one step with `update`, and whether the encoder changed."""
    b.backward()
    before = b.snapshot()[ENCODER]
    b.step(update)
    return not torch.equal(before, b.snapshot()[ENCODER])


@functools.cache
def expected(index: int) -> bool:
    variant = VARIANTS[index]
    return moved(variant.bench(), variant.make_update())


def _check_encoder_moves(fn: Callable) -> Verdict:
    for index, variant in enumerate(VARIANTS):
        b, calls = watched(variant)
        got = fn(b, variant.make_update())
        verdict = stepped_outside(b, variant.what) or stepped_other(b, variant)
        verdict = verdict or _one_step(b, variant) or require_bool(got, variant)
        if verdict is not None:
            return verdict
        if got != expected(index):
            return _wrong_conclusion(fn, b, calls, variant, got, expected(index))
    return passed(
        f"right on all {len(VARIANTS)} hidden benches. Gradients flow and both SGDs move "
        "the encoder; Adam does not. The optimizer is the suspect now."
    )


def _one_step(b: Bench, variant: Variant) -> Verdict | None:
    if len(b.steps) <= 1:
        return None
    return failed(
        f"on {variant.what} your function took {len(b.steps)} steps: the question is whether "
        "ONE step moves the encoder (after one backward)",
        len(b.steps),
        1,
    )


def _wrong_conclusion(
    fn: Callable, b: Bench, calls: list[int], variant: Variant, got: bool, moves: bool
) -> Verdict:
    """What most likely went wrong, once the step itself ran as asked (the log says so)."""
    if variant.optimizer is not None and not b.steps:
        cause = (
            "your function took no step with `update` on the bench: an answer that does not "
            "run the experiment is right on some benches only"
        )
    elif b.parameter(ENCODER).grad is None or unprepared_step(b, calls) is not None:
        cause = (
            "your step ran without bench.backward() before it: with no gradient yet, no "
            "optimizer has anything to move the encoder by. Backward first, then step"
        )
    elif _answers_inverted(fn, moves):
        cause = (
            f"on {VARIANTS[1 if moves else 0].what} your function said {not got}, also the "
            "opposite of what happens: your answer is the wrong way round. encoder_moves is "
            "True when the encoder changed (did_not_move says True when it did not: negate it)"
        )
    elif moves and not torch.equal(b.initial[ENCODER], b.snapshot()[ENCODER]):
        cause = (
            "your step did move the encoder on this bench, so your answer does not come from "
            "its values: do you compare every element of encoder.weight exactly, with `before` "
            "a copy taken before the step (bench.snapshot())? A `before` that is the parameter "
            "itself changes with it"
        )
    elif moves:
        cause = "your step left the encoder as it was here: does the step get the gradients?"
    else:
        cause = "do you compare encoder.weight's own snapshots, and do you really step?"
    return failed(
        f"on {variant.what} the encoder {'moves' if moves else 'does not move'} after one "
        f"step, and your function said {got} ({variant.why}): {cause}",
        got,
        moves,
    )


def _answers_inverted(fn: Callable, moves: bool) -> bool:
    """Whether the learner's function is also wrong, the other way, on a bench of the opposite
    outcome (the story's Adam where the encoder should move, the story's SGD where not)."""
    index = 1 if moves else 0
    try:
        got = fn(VARIANTS[index].bench(), VARIANTS[index].make_update())
    except Exception:  # a probe only: the learner's failure was already found elsewhere
        return False
    return isinstance(got, bool) and got != expected(index)


register(
    Exercise(
        name="02.encoder_moves",
        prompt="Write encoder_moves(bench, update) -> bool: after one backward and one step "
        "with `update`, did encoder.weight change at all?",
        checker=_check_encoder_moves,
        hint="bench.backward() sets the gradients; bench.snapshot() copies the values; "
        "bench.step takes the step with the update you are given, with the bench active. "
        "Compare the encoder's two "
        "snapshots exactly.",
        minutes=10,
    )
)
