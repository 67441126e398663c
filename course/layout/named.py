"""Tensors of a named memory layout: the one vocabulary every lesson uses for "which layout".

The story's bug depends only on the output's layout, so many lessons need "these values, stored
transposed" (op isolation, the Placeholder lab, the C++ kernels, the auditor, the capstone's
planted bugs). One maker (`laid_out`), one test (`has_layout`) and one set of names mean a table
in notebook 03, a finding of the auditor and a capstone culprit say "step-sliced" for the same
strides. Where a learner types a name, torch's spelling `channels_last` is accepted too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch

from course.errors import CourseError, require_choice

# name -> what a tensor of that layout looks like (a capstone lists these as culprit conditions)
LAYOUTS: dict[str, str] = {
    "contiguous": "row-major from the start of its storage, e.g. torch.empty(rows, cols)",
    "transposed": "a 2-D tensor stored column by column, e.g. w.T",
    "step-sliced": "gaps between its elements in memory, e.g. w[:, ::2]",
    "permuted": "3-D or more, dims stored in another order without gaps, e.g. x.permute(1, 2, 0)",
    "storage-offset": "starts after the beginning of its storage, e.g. w[4:]",
    "channels-last": "a 4-D tensor in torch.channels_last memory format (channels innermost)",
    "expanded": "one row broadcast to every row, e.g. row.expand(rows, cols) (never an output)",
}
ALIASES = {"channels_last": "channels-last"}  # torch's spelling, as a learner may type it
DIMS = {"permuted": 3, "channels-last": 4}  # the rank `laid_out` needs; other layouts take any
OFFSET = 7  # where a "storage-offset" tensor starts in its storage
MAX_ELEMENTS = 1 << 26  # 64M elements: large enough for any benchmark, bounded for a typo


def require_layout(layout: object, allowed: Iterable[str] = LAYOUTS) -> str:
    """The course's name for a layout a learner typed, or a CourseError listing `allowed`."""
    options = list(allowed)
    name = ALIASES.get(layout, layout) if isinstance(layout, str) else layout
    if name not in options:
        require_choice("layout", layout, options)
    return name


def laid_out(values: torch.Tensor, layout: str, device: str | torch.device | None = None):
    """A tensor equal to `values`, stored with the named layout's strides (on `device`)."""
    layout = require_layout(layout)
    _require_values(values, layout)
    device = values.device if device is None else device
    out = _empty(tuple(values.shape), layout, values.dtype, device)
    if layout == "expanded":
        return values[:1].to(device).expand_as(values) if values.shape[0] else out
    out.copy_(values)
    return out


def _empty(shape: tuple[int, ...], layout: str, dtype: torch.dtype, device) -> torch.Tensor:
    def empty(*size: int) -> torch.Tensor:
        return torch.empty(size, dtype=dtype, device=device)

    if layout == "transposed":
        return empty(*shape[::-1]).permute(*reversed(range(len(shape))))
    if layout == "step-sliced":
        return empty(*shape[:-1], 2 * shape[-1])[..., ::2]
    if layout == "storage-offset":
        return empty(OFFSET + _numel(shape))[OFFSET:].view(shape)
    if layout == "permuted":
        return empty(shape[2], shape[0], shape[1]).permute(1, 2, 0)
    if layout == "channels-last":
        return empty(*shape).contiguous(memory_format=torch.channels_last)
    return empty(*shape)


def _numel(shape: tuple[int, ...]) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


def _require_values(values: torch.Tensor, layout: str) -> None:
    if not isinstance(values, torch.Tensor):
        raise CourseError(f"values must be a tensor, not {type(values).__name__}")
    if values.numel() > MAX_ELEMENTS:
        raise CourseError(f"{values.numel():,} elements is too many; at most {MAX_ELEMENTS:,}")
    dims = DIMS.get(layout)
    if dims is not None and values.dim() != dims:
        raise CourseError(
            f"layout {layout!r} needs a {dims}-D tensor, got shape {tuple(values.shape)}"
        )
    if dims is None and values.dim() < 1:
        raise CourseError(f"layout {layout!r} needs at least 1 dimension, got a 0-D tensor")


def span(t: torch.Tensor) -> int:
    """How many storage slots lie between a tensor's first and last element, both included."""
    return 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride(), strict=True))


def is_dense(t: torch.Tensor) -> bool:
    """Whether the elements fill their memory span without gaps (contiguous up to a permutation)."""
    return t.numel() == 0 or span(t) == t.numel()


def _channels_last(t: torch.Tensor) -> bool:
    return (
        t.dim() == 4
        and not t.is_contiguous()
        and t.is_contiguous(memory_format=torch.channels_last)
    )


# name -> whether a tensor has that layout: each made layout has its own and no other, while a
# tensor from elsewhere may have two (a transposed view that starts inside its storage)
_TESTS: dict[str, Callable[[torch.Tensor], bool]] = {
    "contiguous": lambda t: t.is_contiguous() and t.storage_offset() == 0,
    "transposed": lambda t: t.dim() == 2 and is_dense(t) and not t.is_contiguous(),
    "step-sliced": lambda t: t.numel() > 0 and span(t) > t.numel(),
    "storage-offset": lambda t: t.storage_offset() != 0,
    "permuted": lambda t: (
        t.dim() >= 3 and is_dense(t) and not t.is_contiguous() and not _channels_last(t)
    ),
    "channels-last": _channels_last,
    "expanded": lambda t: 0 in t.stride() and t.numel() > 1,
}


def has_layout(tensor: torch.Tensor, layout: str) -> bool:
    """Whether `tensor` is laid out as the named layout describes (see LAYOUTS)."""
    return _TESTS[require_layout(layout)](tensor)
