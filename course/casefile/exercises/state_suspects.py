"""Notebook 09's checklist for the optimizer: which state tensors are not contiguous.

`09.state_suspects` runs the learner's rule on hidden (model, optimizer) pairs (Adam, SGD with
momentum, RMSprop, Adagrad, two param groups, frozen and tied parameters, before and after the
first step) and wants (parameter name, state key) pairs, found by identity.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from course.casefile.exercises.common import (
    COURSE_CHECKS,
    _batch,
    _borrowed,
    _channels_last,
    _layer,
    _sae,
    _sliced,
)
from course.exercises import Exercise, Verdict, failed, passed, ready_made, register


def _stepped(model: nn.Module, optimizer=torch.optim.Adam, batch=(16, 8), steps=1, **options):
    """(model, optimizer) after `steps` steps on one batch of this shape (an SAE's unless given),
    so the state made at the first step exists. `optimizer`: one, or its class to make one for the
    model's parameters with these `options` (lr 1e-3 unless given)."""
    if not isinstance(optimizer, torch.optim.Optimizer):
        optimizer = optimizer(model.parameters(), **{"lr": 1e-3, **options})
    for _ in range(steps):
        optimizer.zero_grad()
        model(_batch(*batch)).square().mean().backward()
        optimizer.step()
    return model, optimizer


def _made_contiguous_later() -> tuple[nn.Module, torch.optim.Optimizer]:
    model, optimizer = _stepped(_sae())
    model.encoder.weight.data = model.encoder.weight.data.contiguous()  # a "fix" after step 1
    return _stepped(model, optimizer)  # its new gradient is contiguous too


class _PerHead(nn.Module):
    """Per-head projections stored heads-second and swapped to the front: stride (3, 6, 1).
    Named `heads`, not `weight`: a parameter's name says nothing about its layout."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.Parameter(_batch(4, 2, 3).transpose(0, 1))  # [heads, in, out]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bi,hio->bho", x, self.heads)


def _transposed_linear() -> nn.Module:
    layer = _layer(nn.Linear, 3, 5)
    layer.weight = nn.Parameter(_batch(3, 5).T)  # the story's init, on a plain Linear
    return layer


def _two_groups() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = _sae()
    groups = [
        {"params": list(model.decoder.parameters())},
        {"params": list(model.encoder.parameters()), "lr": 1e-4},
    ]
    return _stepped(model, torch.optim.Adam(groups, lr=1e-3))


def _encoder_frozen_after_a_step() -> tuple[nn.Module, torch.optim.Optimizer]:
    model, optimizer = _stepped(_sae())
    model.encoder.requires_grad_(False)  # fine-tuning the decoder alone from here
    return model, optimizer


def _tied_by_a_view() -> tuple[nn.Module, torch.optim.Optimizer]:
    """A square SAE whose encoder weight is the decoder's memory itself (09.tie_weights' trap):
    two weights of one shape, at one address."""
    model = _sae("contiguous", n_features=8)
    model.encoder.weight = nn.Parameter(model.decoder.weight.detach().T)
    return _stepped(model)


ADAM_PAIRS = [("encoder.weight", "exp_avg"), ("encoder.weight", "exp_avg_sq")]
# label -> (model and optimizer maker, expected pairs, why it matters)
STATE_CASES: dict[str, tuple[Callable[[], tuple], list[tuple[str, str]], str]] = {
    "the story's SAE after one Adam step": (
        lambda: _stepped(_sae()),
        ADAM_PAIRS,
        "Adam made each state tensor with zeros_like(param), which keeps the parameter's layout",
    ),
    "the story's SAE, its encoder weight made contiguous after the first step, then one more": (
        _made_contiguous_later,
        ADAM_PAIRS,
        "the parameter (and so its new gradient) is contiguous now, but its state was made from "
        "the old layout and stays so: check the state tensors themselves",
    ),
    "SGD with momentum on a transposed Linear weight, after two steps": (
        lambda: _stepped(
            _transposed_linear(), torch.optim.SGD, batch=(4, 3), steps=2, lr=0.1, momentum=0.9
        ),
        [("weight", "momentum_buffer")],
        "SGD keeps a momentum_buffer (a clone of the first gradient, in the weight's layout): "
        "read the keys of optimizer.state[p] instead of expecting Adam's",
    ),
    "Adam with two param groups, the encoder in the second": (
        _two_groups,
        ADAM_PAIRS,
        "every param group counts (optimizer.state holds them all)",
    ),
    "centered RMSprop with momentum on a conv net in channels_last, after one step": (
        lambda: _stepped(
            _channels_last(), torch.optim.RMSprop, batch=(2, 3, 8, 8), momentum=0.9, centered=True
        ),
        [
            (name, key)
            for name in ("0.weight", "2.weight")
            for key in ("square_avg", "momentum_buffer", "grad_avg")
        ],
        "each RMSprop state tensor keeps the channels_last layout of a 4-D weight: no transpose, "
        "still not contiguous; and centered=True and momentum add their own keys",
    ),
    "Adam on a 3-D per-head projection whose first two dimensions were swapped": (
        lambda: _stepped(_PerHead(), batch=(5, 4)),
        [("heads", "exp_avg"), ("heads", "exp_avg_sq")],
        "its last stride is 1 and its first is not the largest: ask each tensor whether it "
        "is_contiguous() rather than guess from one stride or its parameter's name (this one "
        "is not called weight)",
    ),
    "Adam with amsgrad=True on the story's SAE": (
        lambda: _stepped(_sae(), amsgrad=True),
        [*ADAM_PAIRS, ("encoder.weight", "max_exp_avg_sq")],
        "amsgrad adds max_exp_avg_sq: take every tensor in the state, not a list of known keys",
    ),
    "the story's SAE after one Adam step, its encoder then frozen (requires_grad_(False))": (
        _encoder_frozen_after_a_step,
        ADAM_PAIRS,
        "freezing keeps the state (Adam skips a parameter with no .grad, but forgets nothing), "
        "and unfreezing it writes into the same tensors again: it counts",
    ),
    "the story's SAE with Adagrad, before its first step": (
        lambda: _stepped(_sae(), torch.optim.Adagrad, steps=0, lr=1e-2),
        [("encoder.weight", "sum")],
        "Adagrad makes its state in its constructor (full_like(param), the parameter's layout), "
        "before any step or gradient: read the state that is there, whatever has run",
    ),
    "Adam on a Linear whose weight is a [:, :2] slice, after one step": (
        lambda: _stepped(_sliced(), batch=(4, 2)),  # weight stride (6, 1): not dense
        [],
        "zeros_like keeps a layout only when it is dense, and a slice with gaps is not: the "
        "state of this non-contiguous weight is contiguous, so ask the state tensors, not the "
        "parameter",
    ),
    "Adam on a square SAE whose encoder weight is a view of the decoder's, after one step": (
        _tied_by_a_view,
        ADAM_PAIRS,
        "its encoder and decoder weights have one shape and one data pointer: only the tensor "
        "itself tells them apart",
    ),
    "the story's SAE before its first Adam step": (
        lambda: _stepped(_sae(), steps=0),
        [],
        "Adam makes its state at the first step: there is no state tensor yet to be wrong",
    ),
    "the fixed SAE after one Adam step": (
        lambda: _stepped(_sae("contiguous")),
        [],
        "contiguous parameters get contiguous state",
    ),
}


def _state_problem(yours: list, expected: list, names: set[str]) -> str:
    """Which pair is wrong: pairs reversed, names mixed up or made up, a pair missing, or extra."""
    twice = sorted({pair for pair in yours if yours.count(pair) > 1})
    if twice:
        return f"you listed {twice[0]} more than once: name each state tensor once"
    if yours and sorted((k, n) for n, k in yours) == expected:
        return "your pairs are (state key, parameter name): put the parameter's name first"
    unknown = sorted({n for n, _ in yours} - names)
    if unknown:
        return (
            f"{unknown[0]!r} is not the name of a parameter of this model: use the full names "
            "from model.named_parameters()"
        )
    if yours and sorted(k for _, k in yours) == sorted(k for _, k in expected):
        return (
            "the right state tensors under the wrong names: optimizer.state is keyed by the "
            "parameter tensor itself, so find each one's name by identity, not by position, "
            "shape or address"
        )
    missing = [pair for pair in expected if pair not in yours]
    if missing:
        return f"you missed {missing[0]}"
    extra = [pair for pair in yours if pair not in expected]
    return f"{extra[0]} is not a non-contiguous tensor in the optimizer's state"


def _check_state_suspects(fn) -> Verdict:
    if getattr(fn, "__wrapped__", fn) in COURSE_CHECKS.values():
        return failed(
            f"{fn.__name__} is the course's own checklist: write the rule yourself, from "
            "optimizer.state"
        )
    for label, (make, expected, why) in STATE_CASES.items():
        model, optimizer = make()
        with ready_made(COURSE_CHECKS) as used:
            try:
                answer = fn(model, optimizer)
            except NotImplementedError:
                raise  # the scaffold's own: `check` reports it as not attempted
            except Exception as exc:
                raised = f"state_suspects raised {type(exc).__name__}: {exc}"
                return failed(f"for {label}, {raised}; {why}")
        if used:
            return _borrowed(used)
        pairs = isinstance(answer, (list, tuple, set, frozenset)) and all(
            isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(s, str) for s in p)
            for p in answer
        )
        if not pairs:
            return failed(
                f"for {label}, return a list of (parameter name, state key) pairs such as "
                "('weight', 'exp_avg')",
                repr(answer)[:80],
            )
        yours = sorted(tuple(pair) for pair in answer)  # a pair written as a list is one too
        if yours != sorted(expected):
            names = {name for name, _ in model.named_parameters()}
            return failed(f"for {label}: {_state_problem(yours, sorted(expected), names)}; {why}")
    return passed(
        f"right on {len(STATE_CASES)} hidden models and optimizers: the state is written in "
        "place every step"
    )


register(
    Exercise(
        "09.state_suspects",
        "Write state_suspects(model, optimizer) -> the (parameter name, state key) pairs of "
        "every non-contiguous tensor in the optimizer's state, such as ('weight', 'exp_avg'): "
        "the tensors the optimizer writes in place at every step.",
        _check_state_suspects,
        "optimizer.state maps each parameter tensor to a dict of its state ({'step': ..., "
        "'exp_avg': ...}); model.named_parameters() gives the names, and a tensor is a "
        "dictionary key by identity.",
        minutes=10,
    )
)
