"""Reference reproductions: one op, one output layout, the emulated device against the CPU.

Each is the isolation pattern of notebook 03 reduced to a function: lay out a *non-constant*
output the way the bug needs, run the one in-place op on the emulated device and on the CPU,
and report whether the results differ. The CPU is the working sibling: the emulated kernels run
the CPU's own arithmetic, so on a healthy device the two agree bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from course import emps
from course.layout.named import laid_out

InPlace = Callable[[torch.Tensor], object]


def differs(
    op: InPlace,
    layout: str,
    shape: tuple[int, ...],
    dtype: torch.dtype = torch.float32,
    shift: float = 2.0,
) -> bool:
    """Whether `op` on an output of a named `layout` gives other values on the device than on CPU.

    The values are random around `shift`: non-zero by default, so "wrote nothing" is visible.
    """
    values = (torch.randn(shape) + shift).to(dtype)
    on_cpu = laid_out(values, layout)
    op(on_cpu)
    on_device = laid_out(values, layout, emps.DEVICE)
    op(on_device)
    return not torch.equal(on_device.cpu(), on_cpu)


# The ops as the scenarios call them; the extra inputs are made on the output's device.
def lerp(out: torch.Tensor) -> None:
    """Adam's first moment: exp_avg.lerp_(grad, 1 - beta1)."""
    out.lerp_(torch.full_like(out, 0.5), 0.1)


def addcdiv(out: torch.Tensor) -> None:
    """Adam's update: param.addcdiv_(exp_avg, denom, value=-lr)."""
    out.addcdiv_(torch.full_like(out, 0.3), torch.full_like(out, 2.0), value=-0.5)


def add_scalar(out: torch.Tensor) -> None:
    """Adam's denominator: denom.add_(eps)."""
    out.add_(0.25)


def add_tensor(out: torch.Tensor) -> None:
    """A bias added in place: q.add_(bias)."""
    out.add_(torch.full_like(out, 0.25))


def mul(out: torch.Tensor) -> None:
    """A scale in place: q.mul_(scale), or AdamW's param.mul_(1 - lr * wd)."""
    out.mul_(0.5)


def relu(out: torch.Tensor) -> None:
    """nn.ReLU(inplace=True)."""
    out.relu_()


def masked_fill(out: torch.Tensor) -> None:
    """Zeroing a masked region in place."""
    out.masked_fill_(out > 2.0, 0.0)


# --- the reference repro of each case (named, so an instructor can read their source) --------


def lerp_on_transposed() -> bool:
    """lerp_ into a column-major 2-D output."""
    return differs(lerp, "transposed", (6, 4))


def addcdiv_on_channels_last() -> bool:
    """addcdiv_ into a channels_last 4-D output."""
    return differs(addcdiv, "channels-last", (2, 3, 4, 5))


def add_on_transposed() -> bool:
    """add_ of a scalar into a column-major 2-D output."""
    return differs(add_scalar, "transposed", (6, 4))


def relu_on_channels_last() -> bool:
    """relu_ of a channels_last 4-D tensor (values of both signs)."""
    return differs(relu, "channels-last", (2, 3, 4, 5), shift=0.0)


def masked_fill_on_channels_last() -> bool:
    """masked_fill_ of a channels_last 4-D tensor."""
    return differs(masked_fill, "channels-last", (2, 3, 4, 5))


def lerp_on_channels_last() -> bool:
    """lerp_ into a channels_last 4-D output."""
    return differs(lerp, "channels-last", (2, 3, 4, 5))


def mul_on_offset() -> bool:
    """mul_ of a contiguous view that starts 7 elements into its storage."""
    return differs(mul, "storage-offset", (4, 6))


def addcdiv_on_offset() -> bool:
    """addcdiv_ into a contiguous view that starts 7 elements into its storage."""
    return differs(addcdiv, "storage-offset", (4, 6))


def lerp_on_bfloat16() -> bool:
    """lerp_ into a contiguous bfloat16 output."""
    return differs(lerp, "contiguous", (6, 4), torch.bfloat16)


def addcdiv_on_bfloat16() -> bool:
    """addcdiv_ into a contiguous bfloat16 output."""
    return differs(addcdiv, "contiguous", (6, 4), torch.bfloat16)


def add_on_permuted() -> bool:
    """add_ of a tensor into a permuted 3-D output."""
    return differs(add_tensor, "permuted", (3, 4, 5))


def mul_on_permuted() -> bool:
    """mul_ of a permuted 3-D output."""
    return differs(mul, "permuted", (3, 4, 5))
