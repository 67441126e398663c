"""02.adam_state, 02.frozen_after and the 02.update_size prediction: inside Adam's state.

Both experiments are run on hidden benches, and the bench's step log says how they ran: one
Adam step (or `steps` of one optimizer, with the betas asked for), with the bench active.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

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
    MADE_UP,
    SMALL,
    STORY_ADAM,
    Variant,
    is_pair,
    require_bool,
    same_answer,
    statistic_verdict,
    stepped_outside,
    unprepared_step,
    watch_backward,
    wrong_setting,
)
from course.isolation.experiments import DECODER, ENCODER, Bench, bench, update_settings

# ---- 02.adam_state ---------------------------------------------------------------------------

STATE_VARIANTS = (
    Variant("the story's bench", "this is the story's observation"),
    Variant("another seed, smaller sizes", "not one seed's numbers", {"seed": 4, **SMALL}),
    Variant(
        f"a later profile ({LATER.name}), another seed",
        "a step on a fixed profile: the state must follow the device",
        {"profile": LATER, "seed": 1},
    ),
    Variant("the CPU", "the control", {"device": "cpu", **SMALL}),
)


@functools.cache
def _state_readings(index: int) -> tuple[tuple[float, float], tuple[list, list]]:
    """The right pair on one hidden bench, and what common misreadings of the state give."""
    b = STATE_VARIANTS[index].bench()
    b.backward()
    optimizer = b.step(experiments.adam(lr=1e-3))
    encoder, decoder = (optimizer.state[b.parameter(n)] for n in (ENCODER, DECODER))
    m, v = encoder["exp_avg"], encoder["exp_avg_sq"]
    right = (m.abs().max().item(), v.abs().max().item())
    grad = b.parameter(ENCODER).grad
    formula = (1 - 0.999) * grad.pow(2).max().item()  # what one step's exp_avg_sq should hold
    theirs = "that is the decoder's state: the question is the encoder's"
    bias = optimizer.state[b.parameter("encoder.bias")]
    of_bias = "that is the encoder's bias: the question is its weight, encoder.weight"
    order = "that is the other number: the pair is (max |exp_avg|, max exp_avg_sq), in that order"
    mistakes = (
        [
            (decoder["exp_avg"].abs().max().item(), theirs),
            (bias["exp_avg"].abs().max().item(), of_bias),
            (v.abs().max().item(), order),
            (m.abs().sum().item(), "that is the sum of magnitudes: the question is the largest"),
            (m.max().item(), "that is the largest signed value: take the absolute value first"),
            (m.abs().mean().item(), "that is the mean magnitude: the question is the largest"),
            (m.abs().flatten()[0].item(), "that is one element: take the largest of all"),
            (m.norm().item(), "that is the norm (all elements together): take the largest one"),
        ],
        [
            (decoder["exp_avg_sq"].abs().max().item(), theirs),
            (bias["exp_avg_sq"].abs().max().item(), of_bias),
            (m.abs().max().item(), order),
            (v.abs().max().sqrt().item(), "that is its square root: give exp_avg_sq itself"),
            (v.abs().mean().item(), "that is the mean: the question is the largest"),
            (v.sum().item(), "that is the sum: the question is the largest"),
            (v.min().item(), "that is the smallest: the question is the largest"),
            (
                formula,
                "that is (1 - beta2) * max grad**2, what the formula says one step gives: the "
                "question is what the optimizer's state holds, so read optimizer.state",
            ),
        ],
    )
    return right, mistakes


def _state_of(fn: Callable, variant: Variant) -> tuple[object, Bench] | Verdict:
    b = variant.bench()
    calls = watch_backward(b)
    try:
        got = fn(b)
    except KeyError as missing:
        if b.parameter(ENCODER).grad is None or unprepared_step(b, calls) is not None:
            return _no_backward(variant)
        return failed(
            f"on {variant.what} your function looked up a key that is not there "
            f"({missing}): optimizer.state is keyed by the parameter tensor itself "
            "(bench.parameter('encoder.weight')), and each entry holds 'step', 'exp_avg' "
            "and 'exp_avg_sq'"
        )
    return _adam_log(b, calls, variant) or (got, b)


def _no_backward(variant: Variant) -> Verdict:
    return failed(
        f"on {variant.what} your Adam step ran without bench.backward() before it: with no "
        "gradient, Adam skips the parameter and makes no state for it. Backward first, then step."
    )


def _adam_log(b: Bench, calls: list[int], variant: Variant) -> Verdict | None:
    """One Adam step, the story's settings, with the bench active and a backward before it."""
    adam_steps = [r for r in b.steps if r.update == "Adam"]
    others = sorted({r.update for r in b.steps if r.update != "Adam"})
    verdict = stepped_outside(b, variant.what)
    if verdict is None and not adam_steps and others:
        verdict = failed(
            f"on {variant.what} your function stepped {', '.join(others)}, not Adam: the "
            "question is the story's optimizer, torch.optim.Adam (experiments.adam(lr=1e-3)); "
            "another optimizer keeps its own state by its own rules"
        )
    if verdict is None and not adam_steps:
        verdict = failed(
            f"on {variant.what} your function took no Adam step on the bench: the numbers must "
            "come from the state of an optimizer stepped on this bench (numbers remembered from "
            "one bench are wrong on the next)"
        )
    if verdict is None and others:
        verdict = failed(
            f"on {variant.what} your function also stepped {', '.join(others)}: the question "
            "is Adam's state after one backward and one Adam step, with nothing else run"
        )
    if verdict is None and len(adam_steps) > 1:
        verdict = failed(
            f"on {variant.what} your function took {len(adam_steps)} Adam steps: the question "
            "is the state after one backward and ONE step",
            len(adam_steps),
            1,
        )
    if verdict is None and unprepared_step(b, calls) is not None:
        verdict = _no_backward(variant)
    settings = (adam_steps[0].lr, adam_steps[0].betas) if adam_steps else None
    if verdict is None and settings != (variant.lr, variant.betas):
        verdict = failed(
            f"on {variant.what} your Adam ran with (lr, betas) {settings}: the question is the "
            "story's Adam, experiments.adam(lr=1e-3) (betas (0.9, 0.999)). Another setting is "
            "another experiment",
            settings,
            (variant.lr, variant.betas),
        )
    return verdict or wrong_setting(
        b, STORY_ADAM, variant.what, "the story's Adam, experiments.adam(lr=1e-3),"
    )


def _check_adam_state(fn: Callable) -> Verdict:
    seen: dict[tuple, tuple[str, tuple]] = {}  # a learner's pair -> where, and the right pair
    for index, variant in enumerate(STATE_VARIANTS):
        ran = _state_of(fn, variant)
        if isinstance(ran, Verdict):
            return ran
        got = ran[0]
        if not is_pair(got):
            return failed(
                f"return a pair (max |exp_avg|, max exp_avg_sq); on {variant.what} you "
                f"returned {got!r}",
                type(got).__name__,
                "a pair of two floats",
            )
        want, mistakes = _state_readings(index)
        mine = (float(got[0]), float(got[1]))
        verdict = same_answer(seen, mine, f"on {variant.what}", want, "this bench's optimizer")
        if verdict is not None:
            return verdict
        for i, label in enumerate(("max |exp_avg|", "max exp_avg_sq")):
            where = f"on {variant.what} ({variant.why})"
            verdict = statistic_verdict(
                label, where, float(got[i]), want[i], mistakes[i], show_expected=False
            )
            if verdict is not None:
                return verdict
    return passed(
        "you read Adam's state yourself: exp_avg is there, and on the story's bench exp_avg_sq "
        "is exactly 0. An average of squares that stays 0: impossible, if the op ran."
    )


def _reference_adam_state():
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(experiments.adam(lr=1e-3))
        state = optimizer.state[bench.parameter("encoder.weight")]
        return state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()

    return encoder_adam_state


def _adam_state_reading(
    read: Callable, name: str = ENCODER, update: Callable | None = None, swap: bool = False
):
    """A reading of the state after one step of `update` (the story's Adam by default)."""

    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(update or experiments.adam(lr=1e-3))
        state = optimizer.state[bench.parameter(name)]
        pair = read(state["exp_avg"]).item(), read(state["exp_avg_sq"]).item()
        return pair[::-1] if swap else pair

    return encoder_adam_state


def _from_the_formula():
    def encoder_adam_state(bench):  # one step's state worked out from the gradient
        bench.backward()
        grad = bench.parameter("encoder.weight").grad
        bench.step(experiments.adam(lr=1e-3))
        return (0.1 * grad.abs().max()).item(), (0.001 * grad.pow(2).max()).item()

    return encoder_adam_state


def _state_without_backward():
    def encoder_adam_state(bench):
        optimizer = bench.step(experiments.adam(lr=1e-3))
        state = optimizer.state[bench.parameter("encoder.weight")]
        return state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()

    return encoder_adam_state


def _printed_after_a_step():
    def encoder_adam_state(bench):
        bench.backward()
        bench.step(experiments.adam(lr=1e-3))
        return (0.004265913274139166, 0.0)  # the story bench's pair, copied

    return encoder_adam_state


def _state_after_sgd_and_adam():
    def encoder_adam_state(bench):
        bench.backward()
        bench.step(experiments.sgd(lr=1e-3))
        optimizer = bench.step(experiments.adam(lr=1e-3))
        state = optimizer.state[bench.parameter("encoder.weight")]
        return state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()

    return encoder_adam_state


def _smallest_exp_avg_sq():
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(experiments.adam(lr=1e-3))
        state = optimizer.state[bench.parameter("encoder.weight")]
        return state["exp_avg"].abs().max().item(), state["exp_avg_sq"].min().item()

    return encoder_adam_state


def _state_by_name():
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(experiments.adam(lr=1e-3))
        state = optimizer.state["encoder.weight"]  # state is keyed by the tensor, not its name
        return state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()

    return encoder_adam_state


def _state_outside_the_bench():
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = torch.optim.Adam(bench.model.parameters(), lr=1e-3)
        optimizer.step()  # outside `with bench:`
        state = optimizer.state[bench.parameter("encoder.weight")]
        return state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()

    return encoder_adam_state


def _state_after_two_steps():
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(experiments.adam(lr=1e-3))
        bench.backward()
        bench.step(optimizer)
        state = optimizer.state[bench.parameter("encoder.weight")]
        return state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()

    return encoder_adam_state


register(
    Exercise(
        name="02.adam_state",
        prompt="Write encoder_adam_state(bench) -> (max |exp_avg|, max exp_avg_sq) of the "
        "encoder weight after one backward and one Adam step (lr 1e-3).",
        checker=_check_adam_state,
        hint="bench.step(experiments.adam(lr=1e-3)) steps with the bench active and returns "
        "the optimizer; optimizer.state is a dict keyed by the parameter tensor itself "
        "(bench.parameter('encoder.weight')).",
        reference=_reference_adam_state,
        wrong_answers=(
            lambda: _adam_state_reading(lambda t: t.abs().max(), "decoder.weight"),
            lambda: _adam_state_reading(lambda t: t.max()),
            lambda: _adam_state_reading(lambda t: t.abs().mean()),
            lambda: _adam_state_reading(lambda t: t.abs().flatten()[0]),
            _state_by_name,
            _state_outside_the_bench,
            _state_after_two_steps,
            lambda: lambda bench: (0.004, 0.0),
            lambda: _adam_state_reading(lambda t: t.abs().max(), swap=True),
            lambda: _adam_state_reading(lambda t: t.abs().max(), update=experiments.adam(1e-2)),
            lambda: _adam_state_reading(
                lambda t: t.abs().max(), update=experiments.adam(1e-3, betas=(0.9, 0.9))
            ),
            _state_without_backward,
            _printed_after_a_step,
            lambda: _adam_state_reading(lambda t: t.abs().max(), "encoder.bias"),
            _state_after_sgd_and_adam,
            lambda: _adam_state_reading(lambda t: t.abs().sum()),
            _smallest_exp_avg_sq,
            lambda: _adam_state_reading(
                lambda t: t.abs().max(), update=lambda params: torch.optim.AdamW(params, lr=1e-3)
            ),
            lambda: _adam_state_reading(torch.linalg.vector_norm),
            _from_the_formula,
            lambda: _adam_state_reading(
                lambda t: t.abs().max(), update=experiments.adam(1e-3, eps=1e-3)
            ),
            lambda: _adam_state_reading(
                lambda t: t.abs().max(), update=experiments.adam(1e-3, weight_decay=0.1)
            ),
            lambda: _adam_state_reading(
                lambda t: t.abs().max(), update=experiments.adam(1e-3, amsgrad=True)
            ),
            lambda: _adam_state_reading(
                lambda t: t.abs().max(), update=experiments.adam(1e-3, maximize=True)
            ),
        ),
    )
)

# ---- 02.frozen_after -------------------------------------------------------------------------

HERRING_VARIANTS = (
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
        steps=1,
    ),
    Variant(
        f"a later profile, {LATER.name}, inputs 3e-7 times as large (betas (0.9, 0.99), 1 step)",
        "tiny inputs give gradients far below Adam's eps, so each element moves by a float32 "
        "step or a few, not by lr: allclose, a threshold or a sum calls that frozen. 'Never "
        "moved' means bitwise equal",
        {"profile": LATER, "seed": 6, **SMALL},
        betas=(0.9, 0.99),
        steps=1,
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


@functools.cache
def _expected_frozen(index: int) -> bool:
    variant = HERRING_VARIANTS[index]
    return _reference_frozen_after()(variant.bench(), variant.betas, variant.steps)


def _herring_log(b: Bench, calls: list[int], variant: Variant, got: object) -> Verdict | None:
    """What the experiment really did: Adam, with the betas given, `steps` times, one optimizer,
    a backward before each step. Fewer steps are fine once the encoder has moved and the answer
    says so (`got` False): no later step can unmove it, so an early return is right."""
    verdict = stepped_outside(b, variant.what)
    others = sorted({r.update for r in b.steps if r.update != "Adam"})
    adam = [r for r in b.steps if r.update == "Adam"]
    if verdict is None and not b.steps:
        verdict = failed(
            f"on {variant.what} your experiment took no step on the bench: an answer that "
            "does not run the experiment (the story's, remembered) is right on one bench only"
        )
    if verdict is None and others:
        verdict = failed(
            f"on {variant.what} your experiment stepped {', '.join(others)}: the "
            "suspects here are Adam's betas and its step count, so step Adam"
        )
    early = _stopped_once_moved(b, adam, variant, got)
    if verdict is None and len(adam) != variant.steps and not early:
        verdict = failed(
            f"on {variant.what} your experiment took {len(adam)} Adam step(s), not the "
            "`steps` it was given: one that ignores `steps` (or is off by one) never tests "
            "the step count it claims to",
            len(adam),
            variant.steps,
        )
    if verdict is None and len({r.optimizer for r in adam}) > 1:
        verdict = failed(
            f"on {variant.what} each of your steps made a fresh Adam, so its state (exp_avg, "
            "exp_avg_sq, the step count) restarted every time and the run never got past step "
            "1. Make the optimizer once and step it again: bench.step(factory) returns it, and "
            "bench.step(optimizer) steps it."
        )
    return verdict or _herring_settings(b, calls, adam, variant)


def _stopped_once_moved(b: Bench, adam: list, variant: Variant, got: object) -> bool:
    """Whether an experiment stopped early, after at least one step, because the encoder had
    already moved: it says "not frozen" and the snapshots agree."""
    moved = not torch.equal(b.initial[ENCODER], b.snapshot()[ENCODER])
    return got is False and moved and 0 < len(adam) < variant.steps


def _herring_settings(b: Bench, calls: list[int], adam: list, variant: Variant) -> Verdict | None:
    """A backward before each step, and Adam with the betas given and the story's lr."""
    unprepared = unprepared_step(b, calls)
    if unprepared is not None:
        return failed(
            f"on {variant.what} your step {unprepared + 1} ran without a bench.backward() "
            "since the step before it: each step needs a backward before it, or it applies "
            "no gradient (the first) or the last step's gradient again (a later one)"
        )
    wrong_betas = [r.betas for r in adam if r.betas != variant.betas]
    if wrong_betas:
        swapped = wrong_betas[0] == tuple(reversed(variant.betas))
        return failed(
            f"on {variant.what} your Adam ran with betas {wrong_betas[0]}, not the betas it "
            "was given: "
            + (
                "they are in the wrong order, betas = (beta1, beta2)"
                if swapped
                else "an experiment that never varies the betas cannot rule them out"
            ),
            wrong_betas[0],
            variant.betas,
        )
    wrong_lr = [r.lr for r in adam if r.lr != variant.lr]
    if wrong_lr:
        return failed(
            f"on {variant.what} your Adam ran with lr {wrong_lr[0]}: the experiment is Adam at "
            "lr 1e-3 with the betas and steps given. Change only what is under test",
            wrong_lr[0],
            variant.lr,
        )
    want = update_settings(experiments.adam(lr=variant.lr, betas=variant.betas))
    return wrong_setting(b, want, variant.what, "the Adam asked for (lr 1e-3, the betas given)")


def _check_frozen_after(fn: Callable) -> Verdict:
    for index, variant in enumerate(HERRING_VARIANTS):
        b = variant.bench()
        calls = watch_backward(b)
        got = fn(b, variant.betas, variant.steps)
        verdict = _herring_log(b, calls, variant, got) or require_bool(got, variant)
        if verdict is not None:
            return verdict
        if got != _expected_frozen(index):
            frozen = "stays frozen" if _expected_frozen(index) else "moves"
            compare = (
                ". Compare a snapshot taken before the first step (bench.snapshot(), a copy) "
                "with one after the last, every element exactly"
                if got
                else ""
            )
            return failed(
                f"on {variant.what} the encoder {frozen}, and your function said "
                f"frozen = {got}: {variant.why}{compare}",
                got,
                _expected_frozen(index),
            )
    return passed(
        f"right on all {len(HERRING_VARIANTS)} hidden benches, with the betas and step counts "
        "you were given: your experiment varies what it claims to test."
    )


def _reference_frozen_after():
    def frozen_after(bench, betas, steps):
        before = bench.snapshot()["encoder.weight"]
        optimizer = experiments.adam(lr=1e-3, betas=betas)
        for _ in range(steps):
            bench.backward()
            optimizer = bench.step(optimizer)
        return torch.equal(before, bench.snapshot()["encoder.weight"])

    return frozen_after


def _herring(
    *,
    use_betas: bool = True,
    fresh: bool = False,
    count: int | None = None,
    make: Callable = experiments.adam,
    order: Callable[[tuple], tuple] = tuple,
    lr: float = 1e-3,
    compare: Callable = torch.equal,
):
    """frozen_after as a learner gets it wrong: betas ignored or reordered, a fresh optimizer
    every step, a fixed step count, another optimizer (`make`) or lr, a loose comparison."""

    def frozen_after(bench, betas, steps):
        before = bench.snapshot()[ENCODER]
        factory = make(lr=lr, betas=order(betas)) if use_betas else make(lr=lr)
        optimizer = factory
        for _ in range(steps if count is None else count):
            bench.backward()
            optimizer = bench.step(factory if fresh else optimizer)
        return compare(before, bench.snapshot()[ENCODER])

    return frozen_after


def _backward(*, once: bool):
    """One backward for all the steps (once), or each step before its backward."""

    def frozen_after(bench, betas, steps):
        before = bench.snapshot()[ENCODER]
        optimizer = experiments.adam(lr=1e-3, betas=betas)
        if once:
            bench.backward()
        for _ in range(steps):
            optimizer = bench.step(optimizer)
            if not once:
                bench.backward()
        return torch.equal(before, bench.snapshot()[ENCODER])

    return frozen_after


def _stepped_outside_the_bench():
    def frozen_after(bench, betas, steps):
        before = bench.snapshot()[ENCODER]
        optimizer = torch.optim.Adam(bench.model.parameters(), lr=1e-3, betas=betas)
        for _ in range(steps):
            bench.backward()
            optimizer.step()  # outside `with bench:`
        return torch.equal(before, bench.snapshot()[ENCODER])

    return frozen_after


def _snapshot_after_the_first_step():
    def frozen_after(bench, betas, steps):
        optimizer = experiments.adam(lr=1e-3, betas=betas)
        before = None
        for _ in range(steps):
            bench.backward()
            optimizer = bench.step(optimizer)
            before = bench.snapshot()[ENCODER] if before is None else before
        return torch.equal(before, bench.snapshot()[ENCODER])

    return frozen_after


def _state_says_frozen(*, also_equal: bool):
    """Frozen read from Adam's state (exp_avg_sq all 0), alone or as a second way to say so."""

    def frozen_after(bench, betas, steps):
        before = bench.snapshot()[ENCODER]
        optimizer = experiments.adam(lr=1e-3, betas=betas)
        for _ in range(steps):
            bench.backward()
            optimizer = bench.step(optimizer)
        still = not optimizer.state[bench.parameter(ENCODER)]["exp_avg_sq"].any().item()
        return still or (also_equal and torch.equal(before, bench.snapshot()[ENCODER]))

    return frozen_after


def _each_step(*, last_only: bool):
    """Each step compared on its own: the last one only, or frozen if any one step was."""

    def frozen_after(bench, betas, steps):
        optimizer = experiments.adam(lr=1e-3, betas=betas)
        frozen = []
        for _ in range(steps):
            bench.backward()
            before = bench.snapshot()[ENCODER]
            optimizer = bench.step(optimizer)
            frozen.append(torch.equal(before, bench.snapshot()[ENCODER]))
        return frozen[-1] if last_only else any(frozen)

    return frozen_after


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
        reference=_reference_frozen_after,
        wrong_answers=(
            lambda: lambda bench, betas, steps: True,
            lambda: _herring(use_betas=False),
            lambda: _herring(fresh=True),
            lambda: _herring(count=1),
            lambda: _herring(use_betas=False, make=experiments.sgd),
            _stepped_outside_the_bench,
            _snapshot_after_the_first_step,
            lambda: lambda bench, betas, steps: not _reference_frozen_after()(bench, betas, steps),
            lambda: _backward(once=True),
            lambda: _backward(once=False),
            lambda: _herring(order=lambda betas: betas[::-1]),
            lambda: _herring(lr=1e-2),
            lambda: _herring(compare=torch.allclose),
            lambda: _herring(compare=lambda a, b: torch.equal(a[:8], b[:8])),
            lambda: _herring(compare=lambda a, b: bool(a.sum() == b.sum())),
            lambda: _herring(compare=lambda a, b: bool((a - b).abs().max() < 1e-6)),
            lambda: lambda bench, betas, steps: _herring()(bench, betas, steps - 1),
            lambda: _herring(make=functools.partial(experiments.adam, amsgrad=True)),
            lambda: _herring(make=functools.partial(experiments.adam, maximize=True)),
            lambda: _herring(make=functools.partial(experiments.adam, weight_decay=0.01)),
            lambda: _herring(compare=lambda a, b: torch.equal(a[::2], b[::2])),
            lambda: _herring(compare=lambda a, b: torch.equal(a[:, :8], b[:, :8])),
            lambda: _state_says_frozen(also_equal=False),
            lambda: _state_says_frozen(also_equal=True),
            lambda: _each_step(last_only=True),
            lambda: _each_step(last_only=False),
        ),
    )
)


# ---- 02.update_size (a prediction) ----------------------------------------------------------


def _update_size() -> str:
    b = bench()
    b.backward()
    optimizer = b.step(experiments.adam(lr=1e-3))
    state = optimizer.state[b.parameter(ENCODER)]
    m, v = state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()
    should = 1e-3 * m / (v**0.5 + 1e-8)
    return "0" if should == 0 else "about lr" if should < 1e-2 else "enormous: lr * m / eps"


register_prediction(
    Prediction(
        "02.update_size",
        "With exp_avg_sq exactly 0, how far should one Adam step (lr 1e-3, eps 1e-8) move the "
        "encoder's largest element: lr * |exp_avg| / (sqrt(exp_avg_sq) + eps)?",
        ("0", "about lr", "enormous: lr * m / eps"),
        _update_size,
        "Enormous: sqrt(0) + eps = 1e-8, so the step is |exp_avg| * 1e5, thousands of times "
        "larger than the weights. Yet your snapshot says the encoder did not move at all. "
        "Two impossible things at once: remember this for notebook 03.",
    )
)
