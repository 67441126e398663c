"""Notebook 09's checklist for the model: which parameters and buffers are not contiguous.

`09.suspects` runs the learner's rule on hidden models (the story's SAE, sliced, offset,
broadcast and channels_last tensors, integer buffers, healthy nets); feedback names what is
true of the tensor an answer missed or blamed.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from course import emps
from course.casefile.exercises.common import (
    COURSE_CHECKS,
    _borrowed,
    _channels_last,
    _layer,
    _sae,
    _sliced,
)
from course.exercises import Exercise, Verdict, failed, passed, ready_made, register


def _with_buffer(name: str, buffer: torch.Tensor, persistent: bool = True) -> nn.Module:
    """A linear layer that keeps a buffer beside it, as a cache or a counter is kept."""
    module = nn.Module()
    module.linear = _layer(nn.Linear, 4, 3)
    module.register_buffer(name, buffer, persistent=persistent)
    return module


def _strided_bias() -> nn.Module:
    layer = _layer(nn.Linear, 4, 4)
    rows = torch.arange(24.0).reshape(6, 4)
    layer.weight = nn.Parameter(rows[2:])  # whole rows: contiguous, at storage offset 8
    layer.bias = nn.Parameter(torch.arange(8.0)[::2])  # every other element: stride (2,)
    return layer


def _healthy() -> nn.Module:
    return nn.Sequential(
        _layer(nn.Linear, 4, 8), nn.BatchNorm1d(8), nn.ReLU(), _layer(nn.Linear, 8, 2)
    )


# label -> (model maker, expected names, why it matters)
SUSPECT_CASES: dict[str, tuple[Callable[[], nn.Module], list[str], str]] = {
    "the story's SAE": (
        _sae,
        ["encoder.weight"],
        "the encoder was initialised as a clone of a transposed view: memory of its own, which "
        "it fills (no view, no gaps), and still not contiguous, since clone() kept the strides",
    ),
    f"the story's SAE on the emulated device ({emps.DEVICE})": (
        lambda: _sae().to(emps.DEVICE),
        ["encoder.weight"],
        "the story's model lived on a device (MPS), and a checklist is run where the model "
        "lives: ask the tensors themselves, on any device",
    ),
    "a Linear whose weight is a [:, :2] slice": (
        _sliced,
        ["weight"],
        "a column slice keeps its parent's row stride: not contiguous, though it is no "
        "transpose and its last stride is 1",
    ),
    "a conv net moved to channels_last": (
        _channels_last,
        ["0.weight", "2.weight"],
        "channels_last stores a conv weight channels innermost: contiguous in that memory "
        "format, but not is_contiguous(), the row-major test the story's kernels made",
    ),
    "a conv net in channels_last whose last conv is 1x1": (
        lambda: _channels_last(last_kernel=1),
        ["0.weight"],
        "a 1x1 kernel's size-1 dimensions do not count, whatever their strides: is_contiguous() "
        "ignores them, so that weight is contiguous in both layouts",
    ),
    "a Linear whose bias is every other element of a vector": (
        _strided_bias,
        ["bias"],
        "a vector with stride 2 is not contiguous, a block of whole rows is (its storage offset "
        "does not matter)",
    ),
    "a module with an expanded buffer": (
        # a per-feature scale, broadcast; not persistent, as a cache often is: it is not in
        # state_dict(), yet the model owns it
        lambda: _with_buffer("scale", torch.ones(1, 3).expand(4, 3), persistent=False),
        ["scale"],
        "buffers are written in place too (BatchNorm's running statistics), and a stride-0 one is "
        "not contiguous",
    ),
    "a module with an integer buffer": (
        # how often each input and output feature fired, written in place at every forward,
        # made (like the story's encoder) from a transpose
        lambda: _with_buffer("fired", torch.zeros(4, 3, dtype=torch.long).T),
        ["fired"],
        "a counter is written in place too (as BatchNorm's num_batches_tracked is), and an "
        "integer tensor has strides like any other: check every dtype",
    ),
    "a model with nothing wrong": (_healthy, [], "a healthy model must give an empty list"),
    "the fixed SAE": (
        lambda: _sae("contiguous"),
        [],
        "its encoder was made contiguous at init",
    ),
}


# watched beside the course's checks: an answer that read state_dict() misses what it leaves out
WATCHED = {**COURSE_CHECKS, "state_dict": nn.Module.state_dict}


def _check_suspects(fn) -> Verdict:
    for label, (make, expected, why) in SUSPECT_CASES.items():
        model = make()
        with ready_made(WATCHED) as called:
            try:
                answer = fn(model)
            except NotImplementedError:
                raise  # the scaffold's own: `check` reports it as not attempted
            except Exception as exc:
                where = f"; {why}" if next(model.parameters()).device.type != "cpu" else ""
                return failed(f"for {label}, suspects raised {type(exc).__name__}: {exc}{where}")
        borrowed = [name for name in called if name in COURSE_CHECKS]
        if borrowed:
            return _borrowed(borrowed)
        if not isinstance(answer, (list, tuple, set, frozenset)):
            return failed(
                f"for {label}, suspects(model) returned {type(answer).__name__}: return a list "
                "of names",
                answer,
                "a list",
            )
        if not all(isinstance(name, str) for name in answer):
            return failed(f"for {label}, return the tensors' names (strings), not the tensors")
        twice = sorted({name for name in answer if list(answer).count(name) > 1})
        if twice:
            return failed(
                f"for {label}, you listed {twice[0]} more than once: name each tensor once "
                "(model.named_parameters() and named_buffers() never repeat a name)"
            )
        if sorted(answer) != expected:
            problem = _suspects_problem(model, set(answer), expected, "state_dict" in called)
            return failed(f"for {label}: {problem}; {why}")
    return passed("you find every non-contiguous tensor the model writes: the first thing to check")


def _suspects_problem(
    model: nn.Module, yours: set[str], expected: list[str], read_state_dict: bool
) -> str:
    """Which name is wrong, and what that tensor is (kind, submodule, stride, .grad); a buffer
    left out of state_dict() is said to be so only to an answer that read state_dict()."""
    tensors = {
        **{n: ("parameter", p) for n, p in model.named_parameters()},
        **{n: ("buffer", b) for n, b in model.named_buffers()},
    }
    unknown = sorted(yours - tensors.keys())
    if unknown:
        return (
            f"{unknown[0]!r} is not a tensor of this model: take the names from the model you "
            "are given"
        )
    extra = sorted(yours - set(expected))
    if extra:
        kind, tensor = tensors[extra[0]]
        offset = tensor.storage_offset()
        at = f", storage offset {offset}" if offset else ""
        return f"{extra[0]} is a contiguous {kind} (stride {tensor.stride()}{at})"
    name = sorted(set(expected) - yours)[0]
    kind, tensor = tensors[name]
    module, _, _ = name.rpartition(".")
    where = f" of the submodule {module!r}" if module else ""
    grad = " with no .grad (never trained)" if kind == "parameter" and tensor.grad is None else ""
    owner = model.get_submodule(module)
    persistent = name.rpartition(".")[2] not in owner._non_persistent_buffers_set
    if kind == "buffer" and read_state_dict and not persistent:
        kind = "buffer registered with persistent=False (so not in state_dict())"
    return (
        f"you missed {name}, a {kind}{where}{grad}, shape {list(tensor.shape)}, stride "
        f"{tensor.stride()}, not contiguous"
    )


register(
    Exercise(
        "09.suspects",
        "Write suspects(model) -> the names of the model's non-contiguous parameters and buffers "
        "(every tensor the model or its optimizer updates in place).",
        _check_suspects,
        "model.named_parameters() and model.named_buffers() yield (name, tensor) pairs; a tensor "
        "knows whether it is_contiguous(), which strides alone do not tell you.",
        minutes=5,
    )
)
