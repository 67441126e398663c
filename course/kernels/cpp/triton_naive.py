"""The naive kernel's mistake in Triton: flat offsets, as if every tensor were contiguous.

Imported only where Triton is installed (see `course.kernels.cpp.gpu`). A Triton kernel
receives bare pointers; `out_ptr + offsets` walks memory slot by slot, whatever the tensor's
strides, so a transposed output is scrambled exactly like the C++ naive kernel's (and
`naive_model`'s).
"""

from __future__ import annotations

import torch

from course.errors import CourseError

try:
    import triton
    import triton.language as tl
except ImportError as exc:  # an optional extra: say what to install instead of a bare traceback
    raise CourseError("course.kernels.cpp.triton_naive needs Triton: pip install triton") from exc

BLOCK = 1024


@triton.jit
def addcmul_naive_kernel(out_ptr, a_ptr, b_ptr, value, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    out = tl.load(out_ptr + offsets, mask=mask)
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, out + value * a * b, mask=mask)


def addcmul_naive_(
    out: torch.Tensor, t1: torch.Tensor, t2: torch.Tensor, value: float = 1.0
) -> torch.Tensor:
    """out += value * t1 * t2, element i at memory slot i of each (wrong if not contiguous)."""
    n = out.numel()
    addcmul_naive_kernel[(triton.cdiv(n, BLOCK),)](out, t1, t2, value, n, BLOCK=BLOCK)
    return out
