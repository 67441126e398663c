"""Tensors of a named memory layout: the one vocabulary every lesson uses for "which layout".

The story's bug depends only on the output's layout, so many lessons need "these values, stored
transposed" (op isolation, the Placeholder lab, the C++ kernels, the auditor). One maker with one
set of names means a table in notebook 03 and a finding of the auditor say "step-sliced" for the
same strides.
"""

from __future__ import annotations

import torch

from course.errors import CourseError, require_choice

# name -> what it looks like for a logical (rows, cols) tensor
LAYOUTS: dict[str, str] = {
    "contiguous": "row-major, stride (cols, 1)",
    "transposed": "the .T of a contiguous (cols, rows) tensor: stride (1, rows)",
    "step-sliced": "every other column of a twice-as-wide tensor: stride (2 * cols, 2)",
    "storage-offset": "contiguous, but starting 7 elements into its storage",
    "permuted-3d": "a 3-D tensor stored with its last dim first: .permute(1, 2, 0)",
    "channels-last": "a 4-D tensor in torch.channels_last memory format",
    "expanded": "one row broadcast to every row: stride (0, 1) (read-only: never an output)",
}
MAX_ELEMENTS = 1 << 26  # 64M elements: large enough for any benchmark, bounded for a typo


def laid_out(values: torch.Tensor, layout: str, device: str | torch.device | None = None):
    """A tensor equal to `values`, stored with the named layout's strides (on `device`)."""
    require_choice("layout", layout, LAYOUTS)
    _require_shape(values, layout)
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
        return empty(7 + _numel(shape))[7:].view(shape)
    if layout == "permuted-3d":
        return empty(shape[2], shape[0], shape[1]).permute(1, 2, 0)
    if layout == "channels-last":
        return empty(*shape).contiguous(memory_format=torch.channels_last)
    return empty(*shape)


def _numel(shape: tuple[int, ...]) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


def _require_shape(values: torch.Tensor, layout: str) -> None:
    if not isinstance(values, torch.Tensor):
        raise CourseError(f"values must be a tensor, not {type(values).__name__}")
    if values.numel() > MAX_ELEMENTS:
        raise CourseError(f"{values.numel():,} elements is too many; at most {MAX_ELEMENTS:,}")
    dims = {"permuted-3d": 3, "channels-last": 4}.get(layout)
    if dims is not None and values.dim() != dims:
        raise CourseError(
            f"layout {layout!r} needs a {dims}-D tensor, got shape {tuple(values.shape)}"
        )
    if dims is None and values.dim() < 1:
        raise CourseError(f"layout {layout!r} needs at least 1 dimension, got a 0-D tensor")


def layout_name(tensor: torch.Tensor) -> str:
    """The name of a tensor's layout, as far as strides tell (for tables and messages)."""
    stride, shape = tensor.stride(), tuple(tensor.shape)
    if 0 in stride and tensor.numel() > 1:
        return "expanded"
    if (
        tensor.dim() == 4
        and not tensor.is_contiguous()
        and tensor.is_contiguous(memory_format=torch.channels_last)
    ):
        return "channels-last"
    if tensor.is_contiguous():
        return "storage-offset" if tensor.storage_offset() else "contiguous"
    if tensor.dim() == 2 and tensor.t().is_contiguous():
        return "transposed"
    order = sorted(range(tensor.dim()), key=lambda d: -stride[d])
    if tensor.dim() == 3 and tensor.permute(*order).is_contiguous():
        return "permuted-3d"  # every element once, dims merely stored in another order
    if shape and stride[-1] > 1:
        return "step-sliced"
    return "non-contiguous"
