"""04.make_contiguous: one call that makes a tensor contiguous, copying only when it must.

Run on twelve hidden inputs that vary what the prompt names: the layout (transposed,
step-sliced, a strided vector, narrowed, expanded, permuted, channels-last; contiguous with and
without an offset, with a size-1 dim whose stride is not the row-major one, a scalar), the
number of dims (0 to 4, every rank from 1 on also non-contiguous) and the dtype (float32,
int64, float16, float64, bool). Each result must hold the same values in the same shape and
dtype, be contiguous, leave the input alone, and be the input itself when that is contiguous
already. A wrong answer is told what happened: a copy that keeps the layout, a view that keeps
it, the input returned as it was, memory relabelled instead of copied, the dtype changed, a
wasted copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from course.exercises import Exercise, Verdict, failed, passed, register
from course.layout.view_or_copy import contiguous_strides


@dataclass(frozen=True)
class Input:
    """One hidden input: what it is, in words, and how to make it (fresh for every run)."""

    what: str
    make: Callable[[], torch.Tensor]


def _grid(dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.arange(24).to(dtype).view(4, 6)


INPUTS = (  # the non-contiguous ones first: they are where a layout is made
    Input("transposed (4, 6) float32", lambda: _grid().T),
    Input("every other column, int64", lambda: _grid(torch.int64)[:, ::2]),
    Input("first 3 columns (stride (6, 1)), float64", lambda: _grid(torch.float64)[:, :3]),
    Input("expanded row (stride 0), float16", lambda: _grid(torch.float16)[:1].expand(3, 6)),
    Input("every other element of a 1-d vector, float64", lambda: torch.arange(10.0)[::2]),
    Input(
        "permuted 3-d, bool",
        lambda: (torch.arange(24).view(2, 3, 4) % 3 == 0).permute(2, 0, 1),
    ),
    Input(
        "channels_last images, float32",
        lambda: torch.arange(120.0).view(2, 3, 4, 5).to(memory_format=torch.channels_last),
    ),
    Input("rows 1-2 (offset 6, contiguous), float32", lambda: _grid()[1:3]),
    Input("already contiguous, float16", lambda: _grid(torch.float16)),
    Input(  # contiguous for torch: a size-1 dim's stride never counts
        "(6, 1) column transposed to (1, 6), float32",
        lambda: torch.arange(6.0).view(6, 1).T,
    ),
    Input("a 0-dim scalar, int64", lambda: torch.tensor(7)),
    Input("a 1-d vector, float32", lambda: torch.arange(5.0)),
)


def _shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _same_result(x: torch.Tensor, before: torch.Tensor, out: object, what: str) -> Verdict | None:
    """Shape, dtype and values: what "a contiguous tensor equal to x" means before the layout."""
    if not isinstance(out, torch.Tensor):
        return failed(f"on the {what} input return a tensor", type(out).__name__, "a tensor")
    if out.shape != x.shape:
        return failed(
            f"on the {what} input the result has another shape", tuple(out.shape), tuple(x.shape)
        )
    if out.dtype != x.dtype:
        return failed(
            f"on the {what} input the result is {out.dtype}, the input {x.dtype}: a layout "
            "change keeps the dtype (and a fix that turns a weight into float64 is no fix "
            "on MPS, which has no float64)",
            out.dtype,
            x.dtype,
        )
    if not torch.equal(out, before):
        relabelled = _shares_memory(out, x)
        why = (
            ": it reads the input's own memory with new strides. as_strided (or a view) only "
            "relabels memory; making a layout contiguous means moving the numbers"
            if relabelled
            else ""
        )
        return failed(f"on the {what} input the result holds other values{why}")
    return None


def _layout_verdict(x: torch.Tensor, out: torch.Tensor, what: str) -> Verdict | None:
    """Contiguous, and a copy only where one is needed."""
    wanted = contiguous_strides(tuple(x.shape))
    if not out.is_contiguous():
        if out is x:
            cause = (
                "you returned the input itself, but it is not contiguous: a test that let it "
                "through (its number of dims, its last stride) is not torch's rule, and "
                "x.to(memory_format=...) returns its input untouched when dtype and device "
                "stay. .contiguous() decides with torch's own rule"
            )
        elif _shares_memory(out, x):
            cause = (
                "your result is a view of the input (same memory), and a view keeps the "
                "input's layout: reshape or view to the same shape moves no data"
            )
        elif out.stride() == x.stride():
            cause = (
                "your result is a copy that keeps the input's layout: clone() (and "
                "empty_like) preserve the strides of what they copy"
            )
        else:
            cause = "the result is not contiguous"
        return failed(f"on the {what} input {cause}", out.stride(), wanted)
    if x.is_contiguous() and x.numel() and not _shares_memory(out, x):
        odd = x.stride() != contiguous_strides(tuple(x.shape))
        return failed(
            f"the {what} input was contiguous already, yet your function copied it: a wasted "
            "copy (in a training loop, one per step)"
            + (
                ". Its strides are not the row-major ones, but a size-1 dim's stride never "
                "counts: torch calls it contiguous (notebook 04's rule)"
                if odd
                else ""
            ),
            "a copy",
            "the input itself",
        )
    return None


def check_make_contiguous(fn: object) -> Verdict:
    """04.make_contiguous: contiguous result, same values and dtype, input untouched, no
    wasted copy, on inputs of every layout, rank and dtype."""
    if not callable(fn):
        return failed("give a function, e.g. def make_contiguous(x): return ...", fn, "a function")
    for case in INPUTS:
        x = case.make()
        before, stride, storage = x.clone(), x.stride(), x.untyped_storage().data_ptr()
        try:
            out = fn(x)
        except Exception as exc:  # the learner's code: its error is the feedback
            why = ""
            if "view" in str(exc):
                why = ". view() never copies, so it cannot merge dims that are not back to back"
            error = str(exc).rstrip(".")
            return failed(
                f"on the {case.what} input your function raised {type(exc).__name__}: {error}{why}"
            )
        changed = (
            x.stride() != stride
            or x.untyped_storage().data_ptr() != storage
            or not torch.equal(x, before)
        )
        if changed:
            return failed(
                f"your function changed its {case.what} input (its strides, memory or values): "
                "return a new layout and leave the input as it was; other code still holds it"
            )
        verdict = _same_result(x, before, out, case.what) or _layout_verdict(x, out, case.what)
        if verdict is not None:
            return verdict
    return passed(
        f"on all {len(INPUTS)} inputs: contiguous() copies exactly when it has to, and returns "
        "the tensor itself when it is already contiguous"
    )


def _make_contiguous_reference():
    def make_contiguous(x):
        return x.contiguous()

    return make_contiguous


def _clone():
    def make_contiguous(x):
        return x.clone()

    return make_contiguous


def _clone_contiguous_format():
    def make_contiguous(x):
        return x.clone(memory_format=torch.contiguous_format)

    return make_contiguous


def _reshape():
    def make_contiguous(x):
        return x.reshape(x.shape)

    return make_contiguous


def _flatten_with_view():
    def make_contiguous(x):
        return x.view(-1).view(x.shape)

    return make_contiguous


def _rebuilt_from_a_list():
    def make_contiguous(x):
        return torch.tensor(x.tolist())

    return make_contiguous


def _last_stride_test():
    def make_contiguous(x):
        return x if x.dim() == 0 or x.stride()[-1] == 1 else x.contiguous()

    return make_contiguous


def _relabelled():
    def make_contiguous(x):
        strides, running = [], 1
        for size in reversed(x.shape):
            strides.insert(0, running)
            running *= size
        return x.as_strided(x.shape, strides)

    return make_contiguous


def _strict_strides_else_forced_copy():
    def make_contiguous(x):
        strides, running = [], 1
        for size in reversed(x.shape):
            strides.insert(0, running)
            running *= size
        if x.stride() == tuple(strides):
            return x
        return x.clone(memory_format=torch.contiguous_format)

    return make_contiguous


def _two_dims_only():
    def make_contiguous(x):
        return x.contiguous() if x.dim() == 2 else x

    return make_contiguous


def _vectors_left_alone():
    def make_contiguous(x):  # "a vector is one row: it cannot be out of order"
        return x if x.dim() < 2 else x.contiguous()

    return make_contiguous


def _to_memory_format():
    def make_contiguous(x):
        return x.to(memory_format=torch.contiguous_format)

    return make_contiguous


def _into_a_float_buffer():
    def make_contiguous(x):
        return torch.empty(x.shape).copy_(x)

    return make_contiguous


def _into_the_input():
    def make_contiguous(x):
        x.data = x.contiguous()
        return x

    return make_contiguous


register(
    Exercise(
        "04.make_contiguous",
        "Write make_contiguous(x): one call that returns a contiguous tensor equal to x, "
        "without copying when x is already contiguous.",
        check_make_contiguous,
        "clone() preserves the layout; clone(memory_format=torch.contiguous_format) always copies. "
        "Which method copies only when it must?",
        _make_contiguous_reference,
        (
            _clone,
            _clone_contiguous_format,
            _reshape,
            _flatten_with_view,
            _rebuilt_from_a_list,
            _last_stride_test,
            _relabelled,
            _into_the_input,
            _strict_strides_else_forced_copy,
            _two_dims_only,
            _to_memory_format,
            _into_a_float_buffer,
            _vectors_left_alone,
        ),
    )
)
