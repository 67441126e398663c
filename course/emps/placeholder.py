"""The Placeholder: how the MPS backend hands tensors to MPSGraph, modelled in Python.

Before macOS 15, MPSGraph kernels only read and write contiguous buffers. PyTorch's `Placeholder`
wraps each tensor a kernel touches; for a non-contiguous tensor it silently gathers a contiguous
copy and points the graph at the copy. For an input that is exactly right. For an *output* the
graph writes into the copy, and unless the kernel itself copies the result back, the write is
lost. The Placeholder cannot tell the two roles apart: see Note [The leaky Placeholder].

Note [The leaky Placeholder]
    One type serves inputs and outputs, so the copy-back duty falls on every kernel author.
    `OutputPlaceholder` below is the redesign: a placeholder that knows it wraps an output and
    writes back on exit, so no kernel can forget.
"""

from __future__ import annotations

import torch

from course.emps.copies import copy_back, gather


class Placeholder:
    """A contiguous view of `tensor` for a graph: the tensor itself, or a silent gathered copy."""

    def __init__(self, tensor: torch.Tensor, strided_buffers: bool = False) -> None:
        self.tensor = tensor
        self.gathered = not strided_buffers and not tensor.is_contiguous()
        self.buffer = gather(tensor) if self.gathered else tensor


class OutputPlaceholder(Placeholder):
    """A placeholder for an output: use it in a `with` block and it copies back on exit."""

    def __enter__(self) -> OutputPlaceholder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.gathered and exc_info[0] is None:
            copy_back(self.tensor, self.buffer)
