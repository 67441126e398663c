"""The hidden outputs notebook 06's checkers run kernels on: every way a tensor can be stored.

A kernel that is right on the layouts a learner tried may still be wrong on one they did not:
a row-sliced output (non-contiguous, yet its last stride is 1), a transposed one that starts
inside its storage, a channels-last one (contiguous in another memory format, not for the graph),
one dim or four. Values are seeded from a private generator.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


def head(t: torch.Tensor) -> str:
    """The first few values, for feedback that shows yours beside torch's."""
    return str([round(v, 4) for v in t.flatten()[:4].tolist()]) + " ..."


HIDDEN_SHAPES: dict[str, tuple[int, ...]] = {
    "transposed": (4, 6),
    "step-sliced": (4, 6),
    "row-sliced": (4, 6),  # every other row: non-contiguous, yet its last stride is 1
    "storage-offset": (4, 6),
    "transposed with a storage offset": (4, 6),
    "permuted 3-d": (2, 3, 4),
    "4-d, two dims swapped": (2, 3, 2, 4),
    "channels-last 4-d": (2, 3, 2, 4),  # dense, and contiguous in *a* memory format: not this one
    "step-sliced 1-d": (12,),
    "contiguous": (4, 6),
    "contiguous 3-d": (2, 3, 4),
}


def _strided_empty(layout: str, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """An empty CPU tensor of `shape` and `dtype` stored in one of the hidden layouts."""
    rows, rest = shape[0], shape[1:]

    def empty(*size: int) -> torch.Tensor:
        return torch.empty(size, dtype=dtype)

    makers: dict[str, Callable[[], torch.Tensor]] = {
        "transposed": lambda: empty(*shape[::-1]).t(),
        "step-sliced": lambda: empty(*shape[:-1], 2 * shape[-1])[..., ::2],
        "step-sliced 1-d": lambda: empty(2 * rows)[::2],
        "row-sliced": lambda: empty(2 * rows, *rest)[::2],
        "storage-offset": lambda: empty(5 + rows, *rest)[5:],
        "transposed with a storage offset": lambda: empty(shape[1] + 1, rows)[1:].t(),
        "permuted 3-d": lambda: empty(shape[2], shape[0], shape[1]).permute(1, 2, 0),
        "4-d, two dims swapped": lambda: empty(shape[0], shape[3], shape[2], shape[1]).transpose(
            1, 3
        ),
        "channels-last 4-d": lambda: empty(*shape).contiguous(memory_format=torch.channels_last),
    }
    return makers.get(layout, lambda: empty(*shape))()


def hidden_output(layout: str, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Seeded values (a private generator) stored in one of the hidden layouts, in `dtype`.

    Why not `hidden_output(layout).to(dtype)`: `.to` keeps strides only of a tensor without
    gaps, so a step-sliced output would come back contiguous."""
    shape = HIDDEN_SHAPES[layout]
    values = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    return _strided_empty(layout, shape, dtype).copy_(values)


def described(layout: str, output: torch.Tensor) -> str:
    """A hidden output as feedback names it: its layout, strides and offset."""
    offset = f", offset {output.storage_offset()}" if output.storage_offset() else ""
    dtype = f", {output.dtype}" if output.dtype != torch.float32 else ""
    return f"a {layout} output (stride {tuple(output.stride())}{offset}{dtype})"
