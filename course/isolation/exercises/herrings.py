"""02.frozen_after: the red herrings (Adam's betas, its step count) really varied.

The experiment runs on hidden benches, each with its own betas and step count, and the bench's
step log says whether it varied what it claims to test: Adam with the betas given, `steps` times,
one optimizer, a backward before each step, the bench active.
"""

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
    stepped_outside,
    unprepared_step,
    watched,
    wrong_setting,
)
from course.isolation.experiments import ENCODER, Bench, StepRecord, update_settings

VARIANTS = (
    Variant(
        "the story's bench (betas (0.9, 0.999), 2 steps)",
        "the story: frozen. Compare encoder.weight before the first step and after the last",
        SMALL,
        steps=2,
    ),
    Variant(
        "the story's bench with another seed (betas (0.5, 0.0), 3 steps)",
        "beta2 = 0 changes nothing on this profile: still frozen",
        {"seed": 5, **SMALL},
        betas=(0.5, 0.0),
        steps=3,
    ),
    Variant(
        f"a later profile, {LATER.name} (betas (0.9, 0.9), 2 steps)",
        "on a fixed profile Adam moves the encoder, whatever the betas",
        {"profile": LATER, **SMALL},
        betas=(0.9, 0.9),
        steps=2,
    ),
    Variant(
        "the CPU, a batch of one sample (betas (0.0, 0.5), 1 step)",
        "the control: Adam trains on the CPU, even in a single step (is your `before` taken "
        "before the first step?). One sample uses only k features, so only k rows of the "
        "encoder move: compare every row, not the first ones",
        {"device": "cpu", "batch_size": 1, **SMALL},
        betas=(0.0, 0.5),
    ),
    Variant(
        f"a later profile, {LATER.name}, inputs 3e-7 times as large (betas (0.9, 0.99), 1 step)",
        "tiny inputs give gradients far below Adam's eps, so each element moves by a float32 "
        "step or a few, not by lr: allclose, a threshold or a sum calls that frozen. 'Never "
        "moved' means bitwise equal",
        {"profile": LATER, "seed": 6, **SMALL},
        betas=(0.9, 0.99),
        data_scale=3e-7,
    ),
    Variant(
        # named as 02.encoder_moves names it: "contiguous" here would answer 02.contiguous,
        # a prediction made later in the notebook
        "the same values initialised another way, on the story's profile "
        "(betas (0.8, 0.0), 3 steps)",
        "whether these move is a fact about the bench, measured, not the story remembered",
        {"init": "contiguous", **SMALL},
        betas=(0.8, 0.0),
        steps=3,
    ),
    Variant(
        f"{MADE_UP.label} (betas (0.9, 0.999), 2 steps)",
        "here Adam's state says one thing and the weights another: 'frozen' is read from "
        "encoder.weight's snapshots, not from a proxy such as exp_avg_sq or the loss",
        {"profile": MADE_UP, "seed": 2, **SMALL},
        steps=2,
    ),
    Variant(
        "the CPU, one sample that keeps a single feature (k = 1), its first 48 inputs zero "
        "(betas (0.9, 0.999), 1 step)",
        "one feature and 16 inputs: 16 of the encoder's 16,384 elements move, in one row "
        "(an odd one) and the last columns. Compare every element, not every other row, the "
        "first rows or the first columns",
        {"device": "cpu", "batch_size": 1, "seed": 5, **SMALL, "k": 1},
        zero_columns=48,
    ),
    Variant(
        "the CPU, a model with one feature and two samples that point opposite ways "
        "(betas (0.0, 0.0), 3 steps)",
        "with beta1 = 0 a step without gradient moves nothing, and here the last step has "
        "none: the encoder moves in the first steps only. Compare a snapshot from before the "
        "FIRST step with one after the last, not each step on its own",
        {"device": "cpu", "batch_size": 1, "seed": 4, "d_model": 4, "n_features": 1, "k": 1},
        betas=(0.0, 0.0),
        steps=3,
        samples=((1.0, 2.0, -1.0, 0.5), (-1.0, -2.0, 1.0, -0.5)),
    ),
)


def frozen(b: Bench, betas: tuple[float, float], steps: int) -> bool:
    """The truth: `steps` Adam steps with these betas, one optimizer, and whether the encoder
    never moved."""
    before = b.snapshot()[ENCODER]
    optimizer = experiments.adam(lr=1e-3, betas=betas)
    for _ in range(steps):
        b.backward()
        optimizer = b.step(optimizer)
    return torch.equal(before, b.snapshot()[ENCODER])


@functools.cache
def expected(index: int) -> bool:
    variant = VARIANTS[index]
    return frozen(variant.bench(), variant.betas, variant.steps)


def _how_it_ran(b: Bench, calls: list[int], variant: Variant, got: object) -> Verdict | None:
    """What the experiment really did: Adam, with the betas given, `steps` times, one optimizer,
    a backward before each step. Fewer steps are fine once the encoder has moved and the answer
    says so (`got` False): no later step can unmove it, so an early return is right."""
    others = ", ".join(sorted({r.update for r in b.steps if r.update != "Adam"}))
    adam = [r for r in b.steps if r.update == "Adam"]
    moved = not torch.equal(b.initial[ENCODER], b.snapshot()[ENCODER])
    early = got is False and moved and 0 < len(adam) < variant.steps
    on = f"on {variant.what} your"
    if verdict := stepped_outside(b, variant.what):
        return verdict
    if not b.steps:
        return failed(
            f"{on} experiment took no step on the bench: an answer that does not run the "
            "experiment (the story's, remembered) is right on one bench only"
        )
    if others:
        return failed(
            f"{on} experiment stepped {others}: the suspects here are Adam's betas and its "
            "step count, so step Adam"
        )
    if len(adam) != variant.steps and not early:
        return failed(
            f"{on} experiment took {len(adam)} Adam step(s), not the `steps` it was given: one "
            "that ignores `steps` (or is off by one) never tests the step count it claims to",
            len(adam),
            variant.steps,
        )
    if len({r.optimizer for r in adam}) > 1:
        return failed(
            f"on {variant.what} each of your steps made a fresh Adam, so its state (exp_avg, "
            "exp_avg_sq, the step count) restarted every time and the run never got past step "
            "1. Make the optimizer once and step it again: bench.step(factory) returns it, and "
            "bench.step(optimizer) steps it."
        )
    return _settings(b, calls, adam, variant)


def _settings(
    b: Bench, calls: list[int], adam: list[StepRecord], variant: Variant
) -> Verdict | None:
    """A backward before each step, and Adam with the betas given and the story's lr."""
    unprepared = unprepared_step(b, calls)
    if unprepared is not None:
        return failed(
            f"on {variant.what} your step {unprepared + 1} ran without a bench.backward() "
            "since the step before it: each step needs a backward before it, or it applies "
            "no gradient (the first) or the last step's gradient again (a later one)"
        )
    betas = next((r.betas for r in adam if r.betas != variant.betas), None)
    if betas is not None:
        cause = (
            "they are in the wrong order, betas = (beta1, beta2)"
            if betas == tuple(reversed(variant.betas))
            else "an experiment that never varies the betas cannot rule them out"
        )
        return failed(
            f"on {variant.what} your Adam ran with betas {betas}, not the betas it was given: "
            + cause,
            betas,
            variant.betas,
        )
    lr = next((r.lr for r in adam if r.lr != variant.lr), None)
    if lr is not None:
        return failed(
            f"on {variant.what} your Adam ran with lr {lr}: the experiment is Adam at lr 1e-3 "
            "with the betas and steps given. Change only what is under test",
            lr,
            variant.lr,
        )
    want = update_settings(experiments.adam(lr=variant.lr, betas=variant.betas))
    return wrong_setting(b, want, variant.what, "the Adam asked for (lr 1e-3, the betas given)")


def _check_frozen_after(fn: Callable) -> Verdict:
    for index, variant in enumerate(VARIANTS):
        b, calls = watched(variant)
        got = fn(b, variant.betas, variant.steps)
        verdict = _how_it_ran(b, calls, variant, got) or require_bool(got, variant)
        if verdict is not None:
            return verdict
        if got != expected(index):
            compare = (
                ". Compare a snapshot taken before the first step (bench.snapshot(), a copy) "
                "with one after the last, every element exactly"
            )
            return failed(
                f"on {variant.what} the encoder {'stays frozen' if expected(index) else 'moves'}"
                f", and your function said frozen = {got}: {variant.why}{compare if got else ''}",
                got,
                expected(index),
            )
    return passed(
        f"right on all {len(VARIANTS)} hidden benches, with the betas and step counts you were "
        "given: your experiment varies what it claims to test."
    )


register(
    Exercise(
        name="02.frozen_after",
        prompt="Write frozen_after(bench, betas, steps) -> bool: `steps` Adam steps (lr 1e-3) "
        "with those betas, one optimizer for all of them, a backward before each; True if "
        "encoder.weight never moved at all.",
        checker=_check_frozen_after,
        hint="Snapshot the encoder first. Make the optimizer once: `optimizer = "
        "bench.step(experiments.adam(lr=1e-3, betas=betas))` returns it, and later "
        "`bench.step(optimizer)` steps the same one (with the bench active). Then compare "
        "the snapshots exactly.",
        minutes=12,
    )
)
