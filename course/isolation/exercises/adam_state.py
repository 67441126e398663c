"""02.adam_state and the 02.update_size prediction: inside Adam's state after one step.

The experiment runs on hidden benches, and the bench's step log says how it ran: one Adam step,
the story's settings, with the bench active and a backward before it. Only then are its numbers
compared, each wrong one named by the misreading of the state that gives it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    passed,
    register,
    register_prediction,
)
from course.isolation import experiments
from course.isolation.exercises.common import (
    LATER,
    SMALL,
    STORY_ADAM,
    Variant,
    is_pair,
    not_a_pair,
    same_answer,
    statistic_verdict,
    stepped_outside,
    unprepared_step,
    watched,
    wrong_setting,
)
from course.isolation.experiments import DECODER, ENCODER, Bench, bench

VARIANTS = (
    Variant("the story's bench", "this is the story's observation"),
    Variant("another seed, smaller sizes", "not one seed's numbers", {"seed": 4, **SMALL}),
    Variant(
        f"a later profile ({LATER.name}), another seed",
        "a step on a fixed profile: the state must follow the device",
        {"profile": LATER, "seed": 1},
    ),
    Variant("the CPU", "the control", {"device": "cpu", **SMALL}),
)
THEIRS = "that is the decoder's state: the question is the encoder's"
OF_BIAS = "that is the encoder's bias: the question is its weight, encoder.weight"
ORDER = "that is the other number: the pair is (max |exp_avg|, max exp_avg_sq), in that order"
MISREADINGS = (  # (of exp_avg, of exp_avg_sq): the misreading, given the state, and its cause
    (
        (lambda s: s.decoder["exp_avg"].abs().max(), THEIRS),
        (lambda s: s.bias["exp_avg"].abs().max(), OF_BIAS),
        (lambda s: s.v.abs().max(), ORDER),
        (lambda s: s.m.abs().sum(), "that is the sum of magnitudes: the question is the largest"),
        (lambda s: s.m.max(), "that is the largest signed value: take the absolute value first"),
        (lambda s: s.m.abs().mean(), "that is the mean magnitude: the question is the largest"),
        (lambda s: s.m.abs().flatten()[0], "that is one element: take the largest of all"),
        (lambda s: s.m.norm(), "that is the norm (all elements together): take the largest one"),
    ),
    (
        (lambda s: s.decoder["exp_avg_sq"].abs().max(), THEIRS),
        (lambda s: s.bias["exp_avg_sq"].abs().max(), OF_BIAS),
        (lambda s: s.m.abs().max(), ORDER),
        (lambda s: s.v.abs().max().sqrt(), "that is its square root: give exp_avg_sq itself"),
        (lambda s: s.v.abs().mean(), "that is the mean: the question is the largest"),
        (lambda s: s.v.sum(), "that is the sum: the question is the largest"),
        (lambda s: s.v.min(), "that is the smallest: the question is the largest"),
        (
            lambda s: (1 - 0.999) * s.grad.pow(2).max().item(),  # one step's exp_avg_sq, by hand
            "that is (1 - beta2) * max grad**2, what the formula says one step gives: the "
            "question is what the optimizer's state holds, so read optimizer.state",
        ),
    ),
)


class _State:
    """Adam's state after the reference's one step on a bench, as the misreadings read it."""

    def __init__(self, b: Bench) -> None:
        b.backward()
        optimizer = b.step(experiments.adam(lr=1e-3))
        encoder, self.decoder, self.bias = (
            optimizer.state[b.parameter(n)] for n in (ENCODER, DECODER, "encoder.bias")
        )
        self.m, self.v = encoder["exp_avg"], encoder["exp_avg_sq"]
        self.grad = b.parameter(ENCODER).grad


@functools.cache
def readings(index: int) -> tuple[tuple[float, float], tuple[list, list]]:
    """The right pair on one hidden bench, and what common misreadings of the state give."""
    s = _State(VARIANTS[index].bench())
    mistakes = tuple([(float(read(s)), cause) for read, cause in slot] for slot in MISREADINGS)
    return (s.m.abs().max().item(), s.v.abs().max().item()), mistakes


def _no_backward(variant: Variant) -> Verdict:
    return failed(
        f"on {variant.what} your Adam step ran without bench.backward() before it: with no "
        "gradient, Adam skips the parameter and makes no state for it. Backward first, then step."
    )


def _run(fn: Callable, variant: Variant) -> tuple[Verdict | None, object]:
    """What the function said on a fresh bench of this variant, or how the experiment went wrong."""
    b, calls = watched(variant)
    try:
        got = fn(b)
    except KeyError as missing:
        if b.parameter(ENCODER).grad is None or unprepared_step(b, calls) is not None:
            return _no_backward(variant), None
        return failed(
            f"on {variant.what} your function looked up a key that is not there "
            f"({missing}): optimizer.state is keyed by the parameter tensor itself "
            "(bench.parameter('encoder.weight')), and each entry holds 'step', 'exp_avg' "
            "and 'exp_avg_sq'"
        ), None
    return _adam_log(b, calls, variant), got


def _adam_log(b: Bench, calls: list[int], variant: Variant) -> Verdict | None:
    """One Adam step, the story's settings, with the bench active and a backward before it."""
    adam = [r for r in b.steps if r.update == "Adam"]
    others = ", ".join(sorted({r.update for r in b.steps if r.update != "Adam"}))
    settings = (adam[0].lr, adam[0].betas) if adam else None
    where = f"on {variant.what} your function"
    if verdict := stepped_outside(b, variant.what):
        return verdict
    if not adam and others:
        return failed(
            f"{where} stepped {others}, not Adam: the question is the story's optimizer, "
            "torch.optim.Adam (experiments.adam(lr=1e-3)); another optimizer keeps its own "
            "state by its own rules"
        )
    if not adam:
        return failed(
            f"{where} took no Adam step on the bench: the numbers must come from the state of "
            "an optimizer stepped on this bench (numbers remembered from one bench are wrong on "
            "the next)"
        )
    if others:
        return failed(
            f"{where} also stepped {others}: the question is Adam's state after one backward "
            "and one Adam step, with nothing else run"
        )
    if len(adam) > 1:
        return failed(
            f"{where} took {len(adam)} Adam steps: the question is the state after one "
            "backward and ONE step",
            len(adam),
            1,
        )
    if unprepared_step(b, calls) is not None:
        return _no_backward(variant)
    if settings != (variant.lr, variant.betas):
        return failed(
            f"on {variant.what} your Adam ran with (lr, betas) {settings}: the question is the "
            "story's Adam, experiments.adam(lr=1e-3) (betas (0.9, 0.999)). Another setting is "
            "another experiment",
            settings,
            (variant.lr, variant.betas),
        )
    asked = "the story's Adam, experiments.adam(lr=1e-3),"
    return wrong_setting(b, STORY_ADAM, variant.what, asked)


def _check_adam_state(fn: Callable) -> Verdict:
    seen: dict = {}  # a learner's pair -> where, and the right pair
    for index, variant in enumerate(VARIANTS):
        verdict, got = _run(fn, variant)
        if verdict is not None:
            return verdict
        where = f"on {variant.what}"
        if not is_pair(got):
            return not_a_pair(where, got, "max |exp_avg|, max exp_avg_sq")
        want, mistakes = readings(index)
        mine = (float(got[0]), float(got[1]))
        verdict = same_answer(seen, mine, where, want, "this bench's optimizer")
        for i, label in enumerate(("max |exp_avg|", "max exp_avg_sq")):
            verdict = verdict or statistic_verdict(
                label, f"{where} ({variant.why})", mine[i], want[i], mistakes[i], shown=False
            )
        if verdict is not None:
            return verdict
    return passed(
        "you read Adam's state yourself: exp_avg is there, and on the story's bench exp_avg_sq "
        "is exactly 0. An average of squares that stays 0: impossible, if the op ran."
    )


register(
    Exercise(
        name="02.adam_state",
        prompt="Write encoder_adam_state(bench) -> (max |exp_avg|, max exp_avg_sq) of the "
        "encoder weight after one backward and one Adam step (lr 1e-3).",
        checker=_check_adam_state,
        hint="bench.step(experiments.adam(lr=1e-3)) steps with the bench active and returns "
        "the optimizer; optimizer.state is a dict keyed by the parameter tensor itself "
        "(bench.parameter('encoder.weight')).",
        minutes=10,
    )
)


# ---- 02.update_size (a prediction) ----------------------------------------------------------


def update_size() -> str:
    """What torch's Adam step would be from the story bench's state, bias correction included."""
    s = _State(bench())
    m, v = s.m.abs().max().item(), s.v.abs().max().item()
    lr, (beta1, beta2), eps = 1e-3, (0.9, 0.999), 1e-8
    should = lr / (1 - beta1) * m / ((v / (1 - beta2)) ** 0.5 + eps)  # step 1 of torch's Adam
    return "0" if should == 0 else "about lr" if should < 1e-2 else "enormous: lr * m / eps"


register_prediction(
    Prediction(
        "02.update_size",
        "With exp_avg_sq exactly 0, how far should one Adam step (lr 1e-3, eps 1e-8) move the "
        "encoder's largest element? The step is lr * |exp_avg| / (sqrt(exp_avg_sq) + eps), "
        "rescaled by Adam's bias correction.",
        ("0", "about lr", "enormous: lr * m / eps"),
        update_size,
        "Enormous: sqrt(0) + eps = 1e-8, and at step 1 Adam's bias correction divides exp_avg "
        "by 1 - beta1 = 0.1, so the step is |exp_avg| * lr / (0.1 * 1e-8) = |exp_avg| * 1e6: "
        "thousands, where no weight of the encoder reaches 0.1. Yet your snapshot says the "
        "encoder did not move at all. Two impossible things at once: remember this for "
        "notebook 03.",
    )
)
