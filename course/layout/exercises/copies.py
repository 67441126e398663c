"""04.make_contiguous: one call that makes a tensor contiguous, copying only when it must.

Run on twelve hidden inputs that vary what the prompt names: the layout, the number of dims (0
to 4) and the dtype. Each result must hold the same values in the same shape and dtype, be
contiguous, leave the input alone, and be the input itself when that is contiguous already. A
wrong answer is told what happened: a copy or a view that keeps the layout, the input returned
as it was, memory relabelled instead of copied, the dtype changed, a wasted copy.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from course.exercises import Exercise, Verdict, failed, passed, register
from course.layout.view_or_copy import contiguous_strides


def _grid(dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.arange(24).to(dtype).view(4, 6)


# The hidden inputs, each made fresh for every run: what it is, in words, and how to make it.
INPUTS: dict[str, Callable[[], torch.Tensor]] = {  # the non-contiguous first: a layout is made
    "transposed (4, 6) float32": lambda: _grid().T,
    "every other column, int64": lambda: _grid(torch.int64)[:, ::2],
    "first 3 columns (stride (6, 1)), float64": lambda: _grid(torch.float64)[:, :3],
    "expanded row (stride 0), float16": lambda: _grid(torch.float16)[:1].expand(3, 6),
    "every other element of a 1-d vector, float64": lambda: torch.arange(10.0)[::2],
    "permuted 3-d, bool": lambda: (torch.arange(24).view(2, 3, 4) % 3 == 0).permute(2, 0, 1),
    "channels_last images, float32": lambda: (
        torch.arange(120.0).view(2, 3, 4, 5).to(memory_format=torch.channels_last)
    ),
    "rows 1-2 (offset 6, contiguous), float32": lambda: _grid()[1:3],
    "already contiguous, float16": lambda: _grid(torch.float16),
    # contiguous for torch: a size-1 dim's stride never counts
    "(6, 1) column transposed to (1, 6), float32": lambda: torch.arange(6.0).view(6, 1).T,
    "a 0-dim scalar, int64": lambda: torch.tensor(7),
    "a 1-d vector, float32": lambda: torch.arange(5.0),
}


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
    for what, make in INPUTS.items():
        x = make()
        before, stride, storage = x.clone(), x.stride(), x.untyped_storage().data_ptr()
        try:
            out = fn(x)
        except Exception as exc:  # the learner's code: its error is the feedback
            why = ". view() never copies, so it cannot merge dims that are not back to back"
            return failed(
                f"on the {what} input your function raised {type(exc).__name__}: "
                f"{str(exc).rstrip('.')}{why * ('view' in str(exc))}"
            )
        changed = (
            x.stride() != stride
            or x.untyped_storage().data_ptr() != storage
            or not torch.equal(x, before)
        )
        if changed:
            return failed(
                f"your function changed its {what} input (its strides, memory or values): "
                "return a new layout and leave the input as it was; other code still holds it"
            )
        verdict = _same_result(x, before, out, what) or _layout_verdict(x, out, what)
        if verdict is not None:
            return verdict
    return passed(
        f"on all {len(INPUTS)} inputs: contiguous() copies exactly when it has to, and returns "
        "the tensor itself when it is already contiguous"
    )


register(
    Exercise(
        "04.make_contiguous",
        "Write make_contiguous(x): one call that returns a contiguous tensor equal to x, "
        "without copying when x is already contiguous.",
        check_make_contiguous,
        "clone() preserves the layout; clone(memory_format=torch.contiguous_format) always copies. "
        "Which method copies only when it must?",
        minutes=5,
    )
)
