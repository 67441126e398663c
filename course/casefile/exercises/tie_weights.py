"""Notebook 09's fix 1 by hand: tie the encoder to the decoder's transpose in memory of its own.

`09.tie_weights` runs the learner's tie on hidden decoder weights (square, float16, on the
emulated device, one-row and one-column ones whose transposes are contiguous already) and names
the view, the copy that keeps the strides, or the lost dtype or device an answer made.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable

import torch
from torch import nn

from course import emps
from course.casefile.exercises.common import _layer
from course.exercises import Exercise, Verdict, failed, passed, register

# (shape, dtype, device) of the hidden decoder weights: a square one (a non-transpose of the right
# shape), a float16 one (a copy must keep the dtype), one on the emulated device (and the device),
# and a one-row weight (a probe's nn.Linear(n, 1)) and a one-column one, whose transposes are
# contiguous already: a copy made only when needed (contiguous()) is no copy there
DECODERS = (
    ((4, 6), torch.float32, "cpu"),
    ((8, 3), torch.float32, "cpu"),
    ((5, 5), torch.float32, "cpu"),
    ((6, 4), torch.float16, "cpu"),
    ((3, 7), torch.float32, emps.DEVICE),
    ((1, 6), torch.float32, "cpu"),
    ((5, 1), torch.float32, emps.DEVICE),
)


def _names_used(fn: Callable) -> set[str]:
    """The attribute and function names in the learner's source ({"T", "clone"}...), if readable;
    each attribute also as ".T", so that a method is not confused with a variable named t."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set()
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return attributes | names | {f".{attr}" for attr in attributes}


# calls that return their input, or a view of it, when they need not copy (attributes in the
# source); the message names every one the learner used, a property as `.T`, a method as `.t()`
VIEW_CALLS = ("T", "t", "mT", "transpose", "permute", "reshape", "view", "flatten")


def _view_message(used: set[str], encoder: torch.Tensor, decoder: torch.Tensor) -> str:
    """Why a result that shares the decoder's memory is wrong, naming the calls that made it."""
    shared = (
        f"a view of the decoder's memory (stride {encoder.stride()}), not a tensor of its own: "
        "training the encoder would move the decoder too"
    )
    if {".to", "contiguous_format"} <= used:
        return (
            "`.to(memory_format=torch.contiguous_format)` returns the tensor itself when dtype "
            "and device match and it judges the layout to be the one asked for (for a 2-D "
            f"tensor it always does): your encoder is {shared}"
        )
    calls = [f"`.{n}`" if n in ("T", "mT") else f"`.{n}()`" for n in VIEW_CALLS if f".{n}" in used]
    named = " and ".join(filter(None, [", ".join(calls[:-1]), *calls[-1:]]))
    if encoder.is_contiguous():  # only a transpose with a size-1 dimension is both
        made = (
            "`.contiguous()` returns such a tensor as it is"
            if ".contiguous" in used
            else f"{named or 'your code'} kept it without a copy"
        )
        return (
            f"the transpose of a {list(decoder.shape)} weight is contiguous already (a size-1 "
            f"dimension's stride does not count), and {made}: your encoder is {shared}"
        )
    if not calls:
        return f"your encoder is {shared}"
    return f"{named} {'returns' if len(calls) == 1 else 'return'} {shared}"


# (names in the learner's source, why a copy made with them kept the transposed strides): the
# first that matches names the cause
LIKES = ("empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like")
COPY_CAUSES = (
    (
        {"clone"},
        "clone() keeps the strides of what it copies (memory_format=torch.preserve_format)",
    ),
    *(
        ({like}, f"{like}() takes the strides of its argument, so copy_ fills a transposed tensor")
        for like in LIKES
    ),
    ({"empty_strided", "as_strided"}, "you gave it the transpose's strides yourself"),
    ({"deepcopy", "copy"}, "a (deep)copy keeps the strides of what it copies"),
)


def _copy_message(used: set[str], stride: tuple[int, ...]) -> str:
    """Why a copy with the transposed strides is wrong, naming the copying call used."""
    why = next(
        (why for names, why in COPY_CAUSES if names & used),
        "your copy kept the transposed strides (an elementwise result such as w.T * 1 follows "
        "its input's layout too)",
    )
    return (
        f"your encoder has its own memory but stride {stride}: {why}; Adam's state would "
        "inherit that layout"
    )


def _check_tie(fn) -> Verdict:
    used = _names_used(fn)
    for shape, dtype, device in DECODERS:
        decoder = _layer(nn.Linear, shape[1], shape[0]).weight.detach().to(device, dtype)
        layout, values = (decoder.shape, decoder.stride()), decoder.cpu().clone()
        where = "" if device == "cpu" else f" on {device}"
        label = f"for a {_dtype_name(dtype)} decoder weight of shape {list(shape)}{where}"
        try:
            encoder = fn(decoder)
        except NotImplementedError:
            raise  # the scaffold's own: `check` reports it as not attempted
        except Exception as exc:
            return failed(f"{label}: tie raised {type(exc).__name__}: {exc}")
        if (decoder.shape, decoder.stride()) != layout or not torch.equal(decoder.cpu(), values):
            return failed(
                f"{label}: tie changed the decoder weight itself (t_(), transpose_() and "
                "`.data =` work in place): the decoder must keep its layout and values; return "
                "a new tensor"
            )
        problem = _tie_problem(encoder, decoder, used)
        if problem is not None:
            return failed(f"{label}: {problem}")
    return passed("a contiguous copy of the transpose: Adam's state will be contiguous too")


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _tie_problem(encoder: object, decoder: torch.Tensor, used: set[str]) -> str | None:
    """What is wrong with one encoder made from one decoder weight (None: nothing)."""
    if not isinstance(encoder, torch.Tensor):
        return f"tie returned {type(encoder).__name__}, not a tensor"
    if encoder.shape != decoder.T.shape:
        return f"your encoder's shape {list(encoder.shape)} is not the transpose's"
    made = (
        " (torch.empty and torch.tensor make float32 CPU tensors unless given dtype= and device=)"
        if used & {"empty", "tensor", "zeros"}
        else ""
    )
    if encoder.device != decoder.device:
        return (
            f"your encoder is on {encoder.device}, the decoder on {decoder.device}: make the "
            f"copy where the weight lives{made}"
        )
    if encoder.dtype != decoder.dtype:
        mps = ", and MPS has no float64" if encoder.dtype == torch.float64 else ""
        return (
            f"your encoder is {_dtype_name(encoder.dtype)}, the decoder "
            f"{_dtype_name(decoder.dtype)}: a weight keeps its dtype (Adam's state would follow "
            f"the new dtype{mps}){made}"
        )
    if not torch.equal(encoder.cpu(), decoder.T.cpu()):
        return (
            "your encoder has the transpose's shape but other values: a reshape or view keeps "
            "the order of the elements, a transpose swaps rows and columns"
        )
    if _same_memory(encoder, decoder):
        return _view_message(used, encoder, decoder)
    if not encoder.is_contiguous():
        return _copy_message(used, encoder.stride())
    return None


def _same_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether `a` is a view of `b`'s memory: one storage (the emulated device has them too, so a
    view through detach(), which leaves no _base behind, is seen there as well)."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


register(
    Exercise(
        "09.tie_weights",
        "Write tie(decoder_weight) -> the encoder's initial weight: the decoder's transpose, as a "
        "contiguous tensor of its own, whatever the weight's shape (decoder weights are "
        "nn.Linear weights, so contiguous).",
        _check_tie,
        "`.T` is a view; `.clone()` keeps its strides; `.contiguous()` copies a non-contiguous "
        "tensor into row-major order but returns a contiguous one as it is, while "
        "`clone(memory_format=...)` always copies.",
        minutes=5,
    )
)
