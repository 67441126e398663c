"""02.sgd_step and 02.encoder_moves: the notebook's answers, the lost writes and the experiments
that run wrong, each with the words its feedback must hold."""

from __future__ import annotations

from collections.abc import Callable

import torch

from course.isolation import experiments
from course.isolation.experiments import ENCODER
from tests.corpus import Corpus
from tests.isolation.exercises.corpus_measuring import did_not_move


def _sgd_step():
    def sgd_step(params, lr):
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad

    return sgd_step


def _rebinding():
    def sgd_step(params, lr):
        with torch.no_grad():
            for p in params:
                p = p - lr * p.grad  # noqa: PLW2901 (the wrong answer: a rebinding)

    return sgd_step


def _list_entry():
    def sgd_step(params, lr):
        with torch.no_grad():
            for i, p in enumerate(params):
                params[i] = p - lr * p.grad

    return sgd_step


def _slice():
    def sgd_step(params, lr):
        with torch.no_grad():
            params[:] = [p - lr * p.grad for p in params]

    return sgd_step


def _data():
    def sgd_step(params, lr):
        for p in params:
            p.data = p.data - lr * p.grad

    return sgd_step


def _returning():
    def sgd_step(params, lr):
        with torch.no_grad():
            return [p - lr * p.grad for p in params]

    return sgd_step


def _in_place(update: Callable, only: Callable = lambda p: True, no_grad: bool = True):
    """A step that runs `update(p, lr)` on each parameter `only` picks, under no_grad or not."""

    def sgd_step(params, lr):
        with torch.no_grad() if no_grad else torch.enable_grad():
            for p in params:
                if only(p):
                    update(p, lr)

    return sgd_step


def _grad_scaled(p, lr):
    p.grad.mul_(lr)  # scales the gradient in place: an input written into
    p.sub_(p.grad)


def _into_copy(copy: Callable):
    """A step written into `copy(p)`: lands only where the copy is the parameter itself."""
    return _in_place(lambda p, lr: copy(p).sub_(lr * p.grad.to(copy(p).device)))


def _scaled(scale: Callable[[float], float]):
    """p -= scale(lr) * grad: a learning rate written in, or used twice."""
    return _in_place(lambda p, lr: p.sub_(scale(lr) * p.grad))


def _torch_sgd():
    def sgd_step(params, lr):
        torch.optim.SGD(params, lr=lr).step()

    return sgd_step


def _encoder_moves():
    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()["encoder.weight"]
        bench.step(update)
        return not did_not_move(before, bench.snapshot()["encoder.weight"])

    return encoder_moves


encoder_moves = _encoder_moves()  # the notebook's name: the control runs call it


def _comparing(compare: Callable, name: str = ENCODER):
    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()[name]
        bench.step(update)
        return not compare(before, bench.snapshot()[name])

    return encoder_moves


def _aliased_snapshot(read: Callable):
    def encoder_moves(bench, update):  # "before" is the parameter itself, not a copy
        bench.backward()
        before = read(bench.parameter(ENCODER).detach())
        bench.step(update)
        return not torch.equal(before.cpu(), bench.snapshot()[ENCODER])

    return encoder_moves


def _moves(*moves: str, equal: bool = False):
    """The experiment as `moves` in order ("backward", "snapshot", "step"), compared at the end;
    `equal` returns did_not_move's answer, not negated."""

    def encoder_moves(bench, update):
        before = None
        for move in moves:
            if move == "snapshot":
                before = bench.snapshot()[ENCODER]
            else:
                getattr(bench, move)(*(update,) if move == "step" else ())
        return torch.equal(before, bench.snapshot()[ENCODER]) is equal

    return encoder_moves


def _stepped_outside_the_bench():
    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()[ENCODER]
        made = update(list(bench.model.parameters()))
        if made is not None:
            made.step()  # outside `with bench:`: on whatever profile is in force
        return not torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


def _always_adam():
    def encoder_moves(bench, update):  # the story's optimizer, whatever `update` says
        bench.backward()
        before = bench.snapshot()[ENCODER]
        bench.step(experiments.adam(lr=1e-3))
        return not torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


def _by_optimizer():
    def encoder_moves(bench, update):  # the story's table, remembered: Adam never moves
        bench.backward()
        return not isinstance(bench.step(update), torch.optim.Adam)

    return encoder_moves


def _by_adam_state():
    def encoder_moves(bench, update):  # exp_avg_sq all 0 taken for "frozen"; SGD always moves
        bench.backward()
        optimizer = bench.step(update)
        if not isinstance(optimizer, torch.optim.Adam):
            return True
        return optimizer.state[bench.parameter(ENCODER)]["exp_avg_sq"].any().item()

    return encoder_moves


def _stepping(replace: Callable | None = None):
    """The update's optimizer stepped inside `with bench:` (a right answer), or, whenever it
    makes an Adam, the story's Adam stepped instead (`replace`)."""

    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()["encoder.weight"]
        made = update(list(bench.model.parameters()))
        if replace is not None and isinstance(made, torch.optim.Adam):
            made = replace(list(bench.model.parameters()))
        with bench:
            if made is not None:
                made.step()
        return not torch.equal(before, bench.snapshot()["encoder.weight"])

    return encoder_moves


STEP = ("backward", "snapshot", "step")

CORPORA = (
    Corpus(
        "02.sgd_step",
        _sgd_step,
        wrong={
            "p = p - lr * p.grad": (_rebinding, "bound to the local name `p`"),
            "params[i] = ...": (_list_entry, "put new tensors into the list"),
            "params[:] = [...]": (_slice, "slice assignment"),
            "p.data = ...": (_data, "`p.data = ...` swaps in another tensor"),
            "returns the new tensors": (_returning, "never sees a return value"),
            "2-D weights only": (
                lambda: _in_place(lambda p, lr: p.sub_(lr * p.grad), only=lambda p: p.dim() == 2),
                "biases too",
            ),
            "scales the gradient in place": (lambda: _in_place(_grad_scaled), "changed p.grad"),
            "torch's own SGD": (_torch_sgd, "called torch.optim.SGD"),
            "no torch.no_grad()": (
                lambda: _in_place(lambda p, lr: p.sub_(lr * p.grad), no_grad=False),
                "leaf Variable",
            ),
            "p -= p.grad": (
                lambda: lambda params, lr: [p.data.sub_(p.grad) for p in params],
                "ignored lr",
            ),
            "p += lr * p.grad": (
                lambda: lambda params, lr: [p.data.add_(lr * p.grad) for p in params],
                "uphill",
            ),
            "p.contiguous().sub_": (
                lambda: _into_copy(torch.Tensor.contiguous),
                "the contiguous ones moved: your write went into a copy",
            ),
            "p.detach().cpu().sub_": (
                lambda: _into_copy(lambda p: p.detach().cpu()),
                "on contiguous CPU parameters your step works",
            ),
            "p.clone().sub_": (lambda: _into_copy(torch.Tensor.clone), "a write into a copy"),
            "lr written in as 1e-3": (lambda: _scaled(lambda lr: 1e-3), "0.001 times its gradient"),
            "2 * lr": (lambda: _scaled(lambda lr: 2 * lr), "0.5 times its gradient"),
            "lr * lr": (lambda: _scaled(lambda lr: lr * lr), "0.0625 times its gradient"),
            "the step rounded to float16": (
                lambda: _in_place(lambda p, lr: p.sub_((lr * p.grad).half().to(p.dtype))),
                "without rounding or a lower precision",
            ),
        },
        right={
            "data.sub_": lambda: lambda params, lr: [p.data.sub_(lr * p.grad) for p in params],
            "detach().copy_": lambda: (
                lambda params, lr: [p.detach().copy_(p.detach() - lr * p.grad) for p in params]
            ),
        },
    ),
    Corpus(
        "02.encoder_moves",
        _encoder_moves,
        wrong={
            "always False": (lambda: lambda bench, update: False, "took no step with `update`"),
            "allclose": (lambda: _comparing(torch.allclose), "allclose"),
            "an alias, not a snapshot": (
                lambda: _aliased_snapshot(lambda p: p),
                "A `before` that is the parameter itself",
            ),
            "no backward": (lambda: _moves("snapshot", "step"), "without bench.backward()"),
            "watches the decoder": (
                lambda: _comparing(torch.equal, "decoder.weight"),
                "encoder.weight's own snapshots",
            ),
            "stepped outside the bench": (_stepped_outside_the_bench, "The bench must be active"),
            "ignores `update`": (_always_adam, "stepped Adam, but the update it was given was SGD"),
            "the first rows": (
                lambda: _comparing(lambda a, b: torch.equal(a[:8], b[:8])),
                "the first rows",
            ),
            "compares sums": (lambda: _comparing(lambda a, b: bool(a.sum() == b.sum())), "a sum"),
            "not negated": (lambda: _moves(*STEP, equal=True), "the wrong way round"),
            "two steps": (
                lambda: _moves("snapshot", "backward", "step", "backward", "step"),
                "ONE step",
            ),
            "step, then backward": (
                lambda: _moves("snapshot", "step", "backward"),
                "without bench.backward() before it",
            ),
            "the optimizer's class": (_by_optimizer, "does not come from its values"),
            ".cpu() of a CPU parameter": (
                lambda: _aliased_snapshot(torch.Tensor.cpu),
                "A `before` that is the parameter itself",
            ),
            "|diff| < 1e-6": (
                lambda: _comparing(lambda a, b: bool((a - b).abs().max() < 1e-6)),
                "compare every element of encoder.weight exactly",
            ),
            "compared in float16": (
                lambda: _comparing(lambda a, b: torch.equal(a.half(), b.half())),
                "compare every element of encoder.weight exactly",
            ),
            "compares means": (
                lambda: _comparing(lambda a, b: bool(a.mean() == b.mean())),
                "compare every element of encoder.weight exactly",
            ),
            "every other row": (
                lambda: _comparing(lambda a, b: torch.equal(a[::2], b[::2])),
                "not every other row",
            ),
            "the first columns": (
                lambda: _comparing(lambda a, b: torch.equal(a[:, :8], b[:, :8])),
                "or the first columns",
            ),
            "moved read from exp_avg_sq": (_by_adam_state, "not from a proxy such as exp_avg_sq"),
            "its own Adam": (
                lambda: _stepping(experiments.adam(lr=1e-3)),
                "lr = 0.001, and the `update` it was given has lr = 1e-08",
            ),
        },
        right={
            "stepped inside `with bench:`": _stepping,
        },
    ),
)
