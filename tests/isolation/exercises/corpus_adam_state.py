"""02.adam_state and 02.frozen_after: the notebook's answers, and the readings of Adam's state and
the red-herring experiments that go wrong, each with the words its feedback must hold."""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from course.isolation import experiments
from course.isolation.experiments import ENCODER
from tests.corpus import Corpus
from tests.isolation.exercises.corpus_measuring import did_not_move


def _adam_state():
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(experiments.adam(lr=1e-3))
        state = optimizer.state[bench.parameter("encoder.weight")]
        return state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()

    return encoder_adam_state


def _reading(read: Callable = lambda t: t.abs().max(), name: str = ENCODER, **options):
    """The state after one step of `update` (the story's Adam by default), read by `read`;
    `swap` returns the pair reversed, `before(bench)` runs before the step (a backward)."""
    update = options.get("update") or experiments.adam(lr=1e-3)

    def encoder_adam_state(bench):
        options.get("before", lambda b: b.backward())(bench)
        optimizer = bench.step(update)
        state = optimizer.state[bench.parameter(name)]
        pair = read(state["exp_avg"]).item(), read(state["exp_avg_sq"]).item()
        return pair[::-1] if options.get("swap") else pair

    return encoder_adam_state


def _adam(**settings):
    """The story's Adam with one setting changed."""
    return _reading(update=experiments.adam(1e-3, **settings))


def _from_the_formula():
    def encoder_adam_state(bench):  # one step's state worked out from the gradient
        bench.backward()
        grad = bench.parameter("encoder.weight").grad
        bench.step(experiments.adam(lr=1e-3))
        return (0.1 * grad.abs().max()).item(), (0.001 * grad.pow(2).max()).item()

    return encoder_adam_state


def _printed_after_a_step():
    def encoder_adam_state(bench):
        bench.backward()
        bench.step(experiments.adam(lr=1e-3))
        return (0.004265913274139166, 0.0)  # the story bench's pair, copied

    return encoder_adam_state


def _sgd_first(bench):
    bench.backward()
    bench.step(experiments.sgd(lr=1e-3))


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


def _list_pair():
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(experiments.adam(lr=1e-3))
        state = optimizer.state[bench.parameter("encoder.weight")]
        return [state["exp_avg"].abs().max().item(), state["exp_avg_sq"].max().item()]

    return encoder_adam_state


def _frozen_after():
    def frozen_after(bench, betas, steps):
        before = bench.snapshot()["encoder.weight"]
        optimizer = experiments.adam(lr=1e-3, betas=betas)
        for _ in range(steps):
            bench.backward()
            optimizer = bench.step(optimizer)
        return did_not_move(before, bench.snapshot()["encoder.weight"])

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


def _herring_outside_the_bench():
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


def _early_return():
    def frozen_after(bench, betas, steps):
        start = bench.snapshot()["encoder.weight"]
        optimizer = experiments.adam(lr=1e-3, betas=betas)
        for _ in range(steps):
            bench.backward()
            optimizer = bench.step(optimizer)
            if not torch.equal(start, bench.snapshot()["encoder.weight"]):
                return False  # moved: no later step can make it never have moved
        return True

    return frozen_after


LOOSE = "allclose, a threshold or a sum"
PROXY = "not from a proxy such as exp_avg_sq"
ALONE = "not each step on its own"

CORPORA = (
    Corpus(
        "02.adam_state",
        _adam_state,
        wrong={
            "the decoder": (lambda: _reading(name="decoder.weight"), "decoder's state"),
            "no abs": (lambda: _reading(torch.max), "largest signed value"),
            "a mean": (lambda: _reading(lambda t: t.abs().mean()), "mean magnitude"),
            "the first element": (lambda: _reading(lambda t: t.abs().flatten()[0]), "one element"),
            'state["encoder.weight"]': (_state_by_name, "keyed by the parameter tensor itself"),
            "stepped outside the bench": (_state_outside_the_bench, "The bench must be active"),
            "two steps": (_state_after_two_steps, "ONE step"),
            "hard-coded numbers": (lambda: lambda bench: (0.004, 0.0), "took no Adam step"),
            "(exp_avg_sq, exp_avg)": (lambda: _reading(swap=True), "in that order"),
            "lr 1e-2": (lambda: _reading(update=experiments.adam(1e-2)), "(0.01, (0.9, 0.999))"),
            "other betas": (lambda: _adam(betas=(0.9, 0.9)), "(0.001, (0.9, 0.9))"),
            "no backward": (
                lambda: _reading(before=lambda bench: None),
                "without bench.backward()",
            ),
            "one step, then the printed pair": (
                _printed_after_a_step,
                "copied from a printed output",
            ),
            "encoder.bias": (lambda: _reading(name="encoder.bias"), "the encoder's bias"),
            "an SGD step first": (lambda: _reading(before=_sgd_first), "also stepped SGD"),
            "a sum": (lambda: _reading(lambda t: t.abs().sum()), "the sum of magnitudes"),
            "exp_avg_sq's min": (_smallest_exp_avg_sq, "the smallest"),
            "AdamW taken for Adam": (
                lambda: _reading(update=lambda params: torch.optim.AdamW(params, lr=1e-3)),
                "stepped AdamW, not Adam",
            ),
            "a norm": (lambda: _reading(torch.linalg.vector_norm), "that is the norm"),
            "worked out from the gradient": (
                _from_the_formula,
                "what the formula says one step gives",
            ),
            "another eps": (lambda: _adam(eps=1e-3), "eps = 0.001"),
            "weight decay": (lambda: _adam(weight_decay=0.1), "weight_decay = 0.1"),
            "AMSGrad": (lambda: _adam(amsgrad=True), "amsgrad = True"),
            "maximize": (lambda: _adam(maximize=True), "maximize = True"),
        },
        right={"a list for the pair": _list_pair},
    ),
    Corpus(
        "02.frozen_after",
        _frozen_after,
        wrong={
            "always True": (
                lambda: lambda bench, betas, steps: True,
                "does not run the experiment",
            ),
            "the default betas": (lambda: _herring(use_betas=False), "never varies the betas"),
            "a new optimizer every step": (lambda: _herring(fresh=True), "fresh Adam"),
            "one step": (lambda: _herring(count=1), "ignores `steps`"),
            "SGD": (lambda: _herring(use_betas=False, make=experiments.sgd), "stepped SGD"),
            "stepped outside the bench": (_herring_outside_the_bench, "The bench must be active"),
            "the snapshot after the first step": (
                _snapshot_after_the_first_step,
                "before the first step",
            ),
            "the answer inverted": (
                lambda: lambda bench, betas, steps: not _frozen_after()(bench, betas, steps),
                "the story: frozen",
            ),
            "one backward for all steps": (
                lambda: _backward(once=True),
                "step 2 ran without a bench.backward()",
            ),
            "step, then backward": (
                lambda: _backward(once=False),
                "step 1 ran without a bench.backward()",
            ),
            "betas reversed": (lambda: _herring(order=lambda b: b[::-1]), "in the wrong order"),
            "another learning rate": (lambda: _herring(lr=1e-2), "lr 0.01"),
            "torch.allclose": (lambda: _herring(compare=torch.allclose), LOOSE),
            "the first rows": (
                lambda: _herring(compare=lambda a, b: torch.equal(a[:8], b[:8])),
                "compare every row, not the first ones",
            ),
            "sums": (lambda: _herring(compare=lambda a, b: bool(a.sum() == b.sum())), LOOSE),
            "max |diff| < 1e-6": (
                lambda: _herring(compare=lambda a, b: bool((a - b).abs().max() < 1e-6)),
                LOOSE,
            ),
            "steps - 1": (
                lambda: lambda bench, betas, steps: _herring()(bench, betas, steps - 1),
                "or is off by one",
            ),
            "AMSGrad": (
                lambda: _herring(make=functools.partial(experiments.adam, amsgrad=True)),
                "amsgrad = True",
            ),
            "maximize": (
                lambda: _herring(make=functools.partial(experiments.adam, maximize=True)),
                "maximize = True",
            ),
            "weight decay": (
                lambda: _herring(make=functools.partial(experiments.adam, weight_decay=0.01)),
                "weight_decay = 0.01",
            ),
            "every other row": (
                lambda: _herring(compare=lambda a, b: torch.equal(a[::2], b[::2])),
                "not every other row",
            ),
            "the first columns": (
                lambda: _herring(compare=lambda a, b: torch.equal(a[:, :8], b[:, :8])),
                "or the first columns",
            ),
            "frozen read from exp_avg_sq": (lambda: _state_says_frozen(also_equal=False), PROXY),
            "snapshots equal, or exp_avg_sq 0": (
                lambda: _state_says_frozen(also_equal=True),
                PROXY,
            ),
            "the last step compared alone": (lambda: _each_step(last_only=True), ALONE),
            "frozen if any one step was": (lambda: _each_step(last_only=False), ALONE),
        },
        right={"returning as soon as the encoder moved": _early_return},
    ),
)
