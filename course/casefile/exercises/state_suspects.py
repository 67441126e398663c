"""Notebook 09's checklist for the optimizer: which state tensors are not contiguous.

`09.state_suspects` runs the learner's rule on hidden (model, optimizer) pairs (Adam, SGD with
momentum, RMSprop, Adagrad, two param groups, frozen and tied parameters, before and after the
first step) and wants (parameter name, state key) pairs, found by identity.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from course.casefile.checklist import checklist, state_findings
from course.casefile.exercises.common import (
    COURSE_CHECKS,
    _batch,
    _borrowed,
    _channels_last,
    _layer,
    _sliced,
)
from course.exercises import Exercise, Verdict, failed, passed, ready_made, register
from course.model.sae import TopKSAE


def _trained(model: nn.Module, optimizer: torch.optim.Optimizer, batch: torch.Tensor, steps=1):
    """(model, optimizer) after `steps` optimizer steps on one batch, so the state exists."""
    for _ in range(steps):
        optimizer.zero_grad()
        model(batch).square().mean().backward()
        optimizer.step()
    return model, optimizer


def _story_adam(**options) -> tuple[nn.Module, torch.optim.Optimizer]:
    model = TopKSAE(d_model=8, n_features=16, k=4, init="transposed")
    return _trained(model, torch.optim.Adam(model.parameters(), lr=1e-3, **options), _batch(16, 8))


def _made_contiguous_later() -> tuple[nn.Module, torch.optim.Optimizer]:
    model, optimizer = _story_adam()
    model.encoder.weight.data = model.encoder.weight.data.contiguous()  # a "fix" after step 1
    return _trained(model, optimizer, _batch(16, 8))  # its new gradient is contiguous too


class _PerHead(nn.Module):
    """Per-head projections stored heads-second and swapped to the front: stride (3, 6, 1).
    Named `heads`, not `weight`: a parameter's name says nothing about its layout."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.Parameter(_batch(4, 2, 3).transpose(0, 1))  # [heads, in, out]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bi,hio->bho", x, self.heads)


def _per_head_adam() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = _PerHead()
    return _trained(model, torch.optim.Adam(model.parameters(), lr=1e-3), _batch(5, 4))


def _sgd_momentum() -> tuple[nn.Module, torch.optim.Optimizer]:
    layer = _layer(nn.Linear, 3, 5)
    layer.weight = nn.Parameter(_batch(3, 5).T)  # the story's init, on a plain Linear
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
    return _trained(layer, optimizer, _batch(4, 3), steps=2)


def _two_groups() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = TopKSAE(d_model=8, n_features=16, k=4, init="transposed")
    groups = [
        {"params": list(model.decoder.parameters())},
        {"params": list(model.encoder.parameters()), "lr": 1e-4},
    ]
    return _trained(model, torch.optim.Adam(groups, lr=1e-3), _batch(16, 8))


def _rmsprop_channels_last() -> tuple[nn.Module, torch.optim.Optimizer]:
    net = _channels_last()
    optimizer = torch.optim.RMSprop(net.parameters(), lr=1e-3, momentum=0.9, centered=True)
    return _trained(net, optimizer, _batch(2, 3, 8, 8))


def _encoder_frozen_after_a_step() -> tuple[nn.Module, torch.optim.Optimizer]:
    model, optimizer = _story_adam()
    model.encoder.requires_grad_(False)  # fine-tuning the decoder alone from here
    return model, optimizer


def _adagrad_before_its_first_step() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = TopKSAE(d_model=8, n_features=16, k=4, init="transposed")
    return model, torch.optim.Adagrad(model.parameters(), lr=1e-2)


def _adam_on_a_slice() -> tuple[nn.Module, torch.optim.Optimizer]:
    layer = _sliced()  # weight stride (6, 1): not contiguous, and not dense either
    return _trained(layer, torch.optim.Adam(layer.parameters(), lr=1e-3), _batch(4, 2))


def _tied_by_a_view() -> tuple[nn.Module, torch.optim.Optimizer]:
    """A square SAE whose encoder weight is the decoder's memory itself (09.tie_weights' trap):
    two weights of one shape, at one address."""
    model = TopKSAE(d_model=8, n_features=8, k=4, init="contiguous")
    model.encoder.weight = nn.Parameter(model.decoder.weight.detach().T)
    return _trained(model, torch.optim.Adam(model.parameters(), lr=1e-3), _batch(16, 8))


def _before_the_first_step() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = TopKSAE(d_model=8, n_features=16, k=4, init="transposed")
    return model, torch.optim.Adam(model.parameters(), lr=1e-3)


def _fixed_adam() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = TopKSAE(d_model=8, n_features=16, k=4, init="contiguous")
    return _trained(model, torch.optim.Adam(model.parameters(), lr=1e-3), _batch(16, 8))


ADAM_PAIRS = [("encoder.weight", "exp_avg"), ("encoder.weight", "exp_avg_sq")]
# label -> (model and optimizer maker, expected pairs, why it matters)
STATE_CASES: dict[str, tuple[Callable[[], tuple], list[tuple[str, str]], str]] = {
    "the story's SAE after one Adam step": (
        _story_adam,
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
        _sgd_momentum,
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
        _rmsprop_channels_last,
        [
            (name, key)
            for name in ("0.weight", "2.weight")
            for key in ("square_avg", "momentum_buffer", "grad_avg")
        ],
        "each RMSprop state tensor keeps the channels_last layout of a 4-D weight: no transpose, "
        "still not contiguous; and centered=True and momentum add their own keys",
    ),
    "Adam on a 3-D per-head projection whose first two dimensions were swapped": (
        _per_head_adam,
        [("heads", "exp_avg"), ("heads", "exp_avg_sq")],
        "its last stride is 1 and its first is not the largest: ask each tensor whether it "
        "is_contiguous() rather than guess from one stride or its parameter's name (this one "
        "is not called weight)",
    ),
    "Adam with amsgrad=True on the story's SAE": (
        lambda: _story_adam(amsgrad=True),
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
        _adagrad_before_its_first_step,
        [("encoder.weight", "sum")],
        "Adagrad makes its state in its constructor (full_like(param), the parameter's layout), "
        "before any step or gradient: read the state that is there, whatever has run",
    ),
    "Adam on a Linear whose weight is a [:, :2] slice, after one step": (
        _adam_on_a_slice,
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
        _before_the_first_step,
        [],
        "Adam makes its state at the first step: there is no state tensor yet to be wrong",
    ),
    "the fixed SAE after one Adam step": (
        _fixed_adam,
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


def _reference_state_suspects():
    def state_suspects(model, optimizer):
        names = {p: name for name, p in model.named_parameters()}  # keyed by the tensor itself
        return [
            (names[p], key)
            for p, state in optimizer.state.items()
            for key, value in state.items()
            if isinstance(value, torch.Tensor) and not value.is_contiguous()
        ]

    return state_suspects


def _state_with(keys: tuple[str, ...] | None = None, groups: int | None = None):
    """The reference with one shortcut: a fixed list of keys, or only the first param groups."""

    def state_suspects(model, optimizer):
        names = {p: name for name, p in model.named_parameters()}
        held = [p for group in optimizer.param_groups[:groups] for p in group["params"]]
        return [
            (names[p], key)
            for p in held
            for key, value in optimizer.state[p].items()
            if (keys is None or key in keys)
            and isinstance(value, torch.Tensor)
            and not value.is_contiguous()
        ]

    return state_suspects


def _from_the_parameters():
    def state_suspects(model, optimizer):  # the parameters' layout, not the state's
        return [
            (name, key)
            for name, p in model.named_parameters()
            if not p.is_contiguous()
            for key in optimizer.state[p]
            if key != "step"
        ]

    return state_suspects


def _from_the_gradients():
    def state_suspects(model, optimizer):  # the gradient's layout, not the state's
        return [
            (name, key)
            for name, p in model.named_parameters()
            if p.grad is not None and not p.grad.is_contiguous()
            for key in optimizer.state[p]
            if key != "step"
        ]

    return state_suspects


KNOWN_KEYS = ("exp_avg", "exp_avg_sq", "momentum_buffer", "square_avg")  # Adam's, SGD's, RMSprop's


def _from_the_last_stride():
    def state_suspects(model, optimizer):  # "transposed or channels_last": the last stride is not 1
        names = {p: name for name, p in model.named_parameters()}
        return [
            (names[p], key)
            for p, state in optimizer.state.items()
            for key, value in state.items()
            if value.dim() and value.stride()[-1] != 1 and 0 not in value.stride()
        ]

    return state_suspects


def _named_by_module():
    def state_suspects(model, optimizer):  # the module's name instead of the parameter's
        names = {
            p: module_name
            for module_name, module in model.named_modules()
            for p in module.parameters(recurse=False)
        }
        return [(names[p], key) for p, key in _reference_pairs(optimizer)]

    return state_suspects


def _reference_pairs(optimizer):
    return [
        (p, key)
        for p, state in optimizer.state.items()
        for key, value in state.items()
        if not value.is_contiguous()
    ]


def _with_a_gradient():
    def state_suspects(model, optimizer):  # only the parameters that have a .grad
        return [
            (name, key)
            for name, p in model.named_parameters()
            if p.grad is not None
            for key, value in optimizer.state[p].items()
            if not value.is_contiguous()
        ]

    return state_suspects


def _named_by(key: Callable[[torch.Tensor], object]):
    """The reference, but naming each parameter by `key` (its shape, its address) instead of
    by the tensor itself."""

    def state_suspects(model, optimizer):
        names = {key(p): name for name, p in model.named_parameters()}
        return [(names[key(p)], k) for p, k in _reference_pairs(optimizer)]

    return state_suspects


def _parameter_or_state():
    def state_suspects(model, optimizer):  # belt and braces: the parameter's layout, or its state's
        return [
            (name, key)
            for name, p in model.named_parameters()
            for key, value in optimizer.state[p].items()
            if value.dim() and not (p.is_contiguous() and value.is_contiguous())
        ]

    return state_suspects


def _trainable_only():
    def state_suspects(model, optimizer):  # the idiom for "trainable parameters"
        return [
            (name, key)
            for name, p in model.named_parameters()
            if p.requires_grad
            for key, value in optimizer.state[p].items()
            if not value.is_contiguous()
        ]

    return state_suspects


def _weights_only():
    def state_suspects(model, optimizer):  # "only weight matrices can be non-contiguous"
        names = {p: name for name, p in model.named_parameters()}
        return [
            (names[p], key) for p, key in _reference_pairs(optimizer) if names[p].endswith("weight")
        ]

    return state_suspects


def _named_by_position():
    def state_suspects(model, optimizer):
        return [
            (name, key)
            for (name, _), state in zip(
                model.named_parameters(), optimizer.state.values(), strict=False
            )
            for key, value in state.items()
            if not value.is_contiguous()
        ]

    return state_suspects


def _transposes_only():
    def state_suspects(model, optimizer):
        names = {p: name for name, p in model.named_parameters()}
        return [
            (names[p], key)
            for p, state in optimizer.state.items()
            for key, value in state.items()
            if value.dim() == 2 and value.stride(0) < value.stride(1)
        ]

    return state_suspects


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
        _reference_state_suspects,
        (
            lambda: _state_with(keys=("exp_avg", "exp_avg_sq")),
            _from_the_parameters,
            lambda: _state_with(groups=1),
            _named_by_position,
            lambda: _state_with(keys=("exp_avg_sq",)),
            _transposes_only,
            lambda: checklist,
            lambda: lambda m, o: [tuple(f.target.split()) for f in state_findings(m, o, True)],
            _from_the_gradients,
            lambda: lambda m, o: [(key, name) for name, key in _reference_state_suspects()(m, o)],
            lambda: lambda m, o: 2 * _reference_state_suspects()(m, o),
            lambda: _state_with(keys=(*KNOWN_KEYS, "max_exp_avg_sq")),
            _from_the_last_stride,
            _named_by_module,
            lambda: lambda m, o: list(ADAM_PAIRS),
            _with_a_gradient,
            lambda: _named_by(lambda p: tuple(p.shape)),
            lambda: _named_by(lambda p: p.data_ptr()),
            _parameter_or_state,
            _weights_only,
            _trainable_only,
        ),
    )
)
