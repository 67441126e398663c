"""Notebook 09's exercises: tie the weights and find the suspects, checked on hidden models."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable

import torch
from torch import nn

from course.casefile.fixes import SCENARIOS, run_scenario
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    passed,
    register,
    register_prediction,
)
from course.model.sae import TopKSAE

# --- 09.tie_weights ------------------------------------------------------------------------------

DECODER_SHAPES = ((4, 6), (8, 3), (5, 5))  # a square one: a non-transpose of the right shape


def _names_used(fn: Callable) -> set[str]:
    """The attribute and function names in the learner's source ({"T", "clone"}...), if readable."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set()
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
    }


def _view_message(used: set[str], stride: tuple[int, ...]) -> str:
    """Why a result that shares the decoder's memory is wrong, naming the call that made it."""
    call = next(
        (f"{c}" for c in ("t()", "T", "transpose()", "permute()") if c.strip("()") in used), ""
    )
    made = f"`.{call}` returns a view" if call else "your encoder is a view"
    return (
        f"{made} of the decoder's memory (stride {stride}), not a tensor of its own: training the "
        "encoder would move the decoder too"
    )


def _copy_message(used: set[str], stride: tuple[int, ...]) -> str:
    """Why a copy with the transposed strides is wrong, naming the copying call used."""
    if "clone" in used:
        why = "clone() keeps the strides of what it copies (memory_format=torch.preserve_format)"
    elif "empty_like" in used:
        why = "empty_like() takes the strides of its argument, so copy_ fills a transposed tensor"
    else:
        why = "your copy kept the transposed strides"
    return (
        f"your encoder has its own memory but stride {stride}: {why}; Adam's state would "
        "inherit that layout"
    )


def _check_tie(fn) -> Verdict:
    used = _names_used(fn)
    for shape in DECODER_SHAPES:
        decoder = nn.Linear(shape[1], shape[0]).weight.detach()  # what a real decoder weight is
        encoder = fn(decoder)
        label = f"for a decoder weight of shape {list(shape)}"
        if not isinstance(encoder, torch.Tensor):
            return failed(f"{label} tie returned {type(encoder).__name__}, not a tensor")
        if tuple(encoder.shape) != shape[::-1]:
            return failed(
                f"{label} your encoder's shape is not the transpose's",
                list(encoder.shape),
                list(shape[::-1]),
            )
        if not torch.equal(encoder, decoder.T):
            return failed(
                f"{label} your encoder has the transpose's shape but other values: a reshape or "
                "view keeps the order of the elements, a transpose swaps rows and columns"
            )
        if encoder.untyped_storage().data_ptr() == decoder.untyped_storage().data_ptr():
            return failed(f"{label}: {_view_message(used, encoder.stride())}", "a view", "a copy")
        if not encoder.is_contiguous():
            return failed(
                f"{label}: {_copy_message(used, encoder.stride())}",
                encoder.stride(),
                "row-major strides",
            )
    return passed("a contiguous copy of the transpose: Adam's state will be contiguous too")


def _reference_tie():
    def tie(decoder_weight):
        return decoder_weight.T.contiguous()

    return tie


register(
    Exercise(
        "09.tie_weights",
        "Write tie(decoder_weight) -> the encoder's initial weight: the decoder's transpose, as a "
        "contiguous tensor of its own (decoder weights are nn.Linear weights, so contiguous).",
        _check_tie,
        "`.T` is a view; `.clone()` keeps its strides; `.contiguous()` on a non-contiguous tensor "
        "copies into row-major order.",
        _reference_tie,
        (
            lambda: lambda w: w.T.clone(),
            lambda: lambda w: w.T,
            lambda: lambda w: w.t(),
            lambda: lambda w: torch.empty_like(w.T).copy_(w.T),
            lambda: lambda w: w.reshape(w.shape[1], w.shape[0]).clone(),
            lambda: lambda w: w.clone(),
        ),
    )
)


# --- 09.suspects ---------------------------------------------------------------------------------


class _Scaled(nn.Module):
    """A linear layer with a per-feature scale kept as a buffer (broadcast with stride 0)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 3)
        self.register_buffer("scale", torch.ones(1, 3).expand(4, 3))


def _sliced() -> nn.Module:
    layer = nn.Linear(2, 4)
    layer.weight = nn.Parameter(torch.randn(4, 6)[:, :2])  # stride (6, 1): last stride 1
    return layer


def _channels_last() -> nn.Module:
    net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 4, 3))
    return net.to(memory_format=torch.channels_last)  # how conv nets get it in practice


def _healthy() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


# label -> (model maker, expected names, why it matters)
SUSPECT_CASES: dict[str, tuple[Callable[[], nn.Module], list[str], str]] = {
    "the story's SAE": (
        lambda: TopKSAE(d_model=8, n_features=16, k=4, init="transposed"),
        ["encoder.weight"],
        "the encoder was initialised from a transposed view",
    ),
    "a Linear whose weight is a [:, :2] slice": (
        _sliced,
        ["weight"],
        "a column slice keeps its parent's row stride: non-contiguous, yet its last stride is 1",
    ),
    "a conv net moved to channels_last": (
        _channels_last,
        ["0.weight", "2.weight"],
        "channels_last stores a conv weight channels innermost: not contiguous by default rules",
    ),
    "a module with an expanded buffer": (
        _Scaled,
        ["scale"],
        "buffers are written in place too (BatchNorm's running statistics), and a stride-0 one is "
        "not contiguous",
    ),
    "a model with nothing wrong": (_healthy, [], "a healthy model must give an empty list"),
    "the fixed SAE": (
        lambda: TopKSAE(d_model=8, n_features=16, k=4, init="contiguous"),
        [],
        "its encoder was made contiguous at init",
    ),
}


def _check_suspects(fn) -> Verdict:
    for label, (make, expected, why) in SUSPECT_CASES.items():
        answer = fn(make())
        if not isinstance(answer, (list, tuple, set)):
            return failed(
                f"for {label}, suspects(model) returned {type(answer).__name__}: return a list "
                "of names",
                answer,
                "a list",
            )
        yours = sorted(answer)
        if yours != expected:
            return failed(f"for {label} ({why})", yours, expected)
    return passed("you find every non-contiguous tensor the model writes: the first thing to check")


def _reference_suspects():
    def suspects(model):
        tensors = [*model.named_parameters(), *model.named_buffers()]
        return [name for name, t in tensors if not t.is_contiguous()]

    return suspects


register(
    Exercise(
        "09.suspects",
        "Write suspects(model) -> the names of the model's non-contiguous parameters and buffers "
        "(every tensor the model or its optimizer updates in place).",
        _check_suspects,
        "model.named_parameters() and model.named_buffers() yield (name, tensor) pairs; a tensor "
        "knows whether it is_contiguous(), which strides alone do not tell you.",
        _reference_suspects,
        (
            lambda: lambda m: [n for n, p in m.named_parameters() if p.stride()[-1] != 1],
            lambda: (
                lambda m: [
                    n
                    for n, p in m.named_parameters()
                    if list(p.stride()) != sorted(p.stride())[::-1]
                ]
            ),
            lambda: lambda m: [n for n, p in m.named_parameters() if not p.is_contiguous()],
            lambda: lambda m: [n for n, p in m.named_parameters() if p.dim() > 1],
            lambda: (
                lambda m: [
                    n
                    for n, p in m.named_parameters()
                    if p.grad is not None and not p.is_contiguous()
                ]
            ),
        ),
    )
)


# --- 09.which_fixes (a prediction) ---------------------------------------------------------------

FIX_CHOICES = ("none", "only fix 1", "fix 1 and fix 2", "all three")


def _which_fixes() -> str:
    """Train every scenario briefly (a small SAE) and name the fixes that unfreeze the encoder."""
    small = {"steps": 10, "batch_size": 32, "n_features": 128, "progress": None}
    moved = [
        label
        for label in list(SCENARIOS)[1:]
        if not run_scenario(label, **small).summary()["encoder_frozen"]
    ]
    return {0: "none", 3: "all three"}.get(
        len(moved), "only fix 1" if moved == [list(SCENARIOS)[1]] else "fix 1 and fix 2"
    )


register_prediction(
    Prediction(
        "09.which_fixes",
        "Each fix changes one thing from the broken run. Which of them unfreeze the encoder?",
        FIX_CHOICES,
        _which_fixes,
        "The bug needs both a non-contiguous output and a kernel that drops writes to it. "
        "Fix 1 removes the first (Adam's state is contiguous too: zeros_like copies the layout), "
        "fix 2 the second for addcmul_/addcdiv_, and fix 3 makes the copies unnecessary: "
        "each is enough on its own.",
        answer_words=("either one", "each is enough", "all three fix"),
    )
)
