"""What a planted kernel does wrong when its condition holds.

Each effect is modelled on a way real kernels have failed: a result computed into a temporary
and dropped (the story's bug), a copy-back in the wrong element order, a launch that covers only
part of the output, an operand read from the wrong place, a stale cached result, a scalar
mangled on its way into the kernel. Every effect computes the op's real result with the device's
own machinery (`KernelCall.graph`, on buffers from `KernelCall.placeholder`), then writes all,
part or none of it, so the arithmetic stays the CPU's.

`ALLOWED` says which effects make sense for which condition: a scrambled copy-back needs an
output without gaps, a stale result needs a cache, a mangled scalar needs a scalar.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from course.emps.mps_kernels import KernelCall
from course.layout.named import is_dense
from course.mystery.conditions import (
    TINY,
    Memory,
    Trigger,
    broadcast,
    cache_key,
)


def result_of(call: KernelCall, inputs=None, scalar=None) -> torch.Tensor:
    """The op's result in a contiguous temporary, the output untouched.

    `inputs` replaces the tensors the op reads (default: its own); `scalar` maps every number
    argument on its way into the kernel.
    """
    needs_copy = not call.output.is_contiguous()
    call.temporaries += int(needs_copy)
    result = call.output.contiguous() if needs_copy else call.output.clone()
    tensors = list(call.inputs) if inputs is None else inputs
    buffers = [call.placeholder(t).buffer for t in tensors]
    if scalar is None:
        call.graph(result, buffers)
    else:
        call.graph(result, buffers, scalar=scalar)
    return result


def _memory_order(output: torch.Tensor) -> torch.Tensor:
    """A flat view of a dense output's elements in the order they lie in memory."""
    return torch.as_strided(output, (output.numel(),), (1,), output.storage_offset())


def _write_where(call: KernelCall, result: torch.Tensor, written: torch.Tensor) -> None:
    """Write the result only where `written` (a bool mask in the output's shape) is True."""
    call.output.copy_(torch.where(written, result, call.output))


def _first(call: KernelCall, count: int) -> torch.Tensor:
    """A mask of the first `count` elements a launch reaches: in memory order if dense."""
    output = call.output
    if not is_dense(output):
        return torch.arange(output.numel()).view(output.shape) < count
    order = torch.zeros(output.numel(), dtype=torch.bool)
    order[:count] = True
    mask = torch.empty_like(output, dtype=torch.bool)  # same strides: memory order matches
    _memory_order(mask).copy_(order)
    return mask


# --- the effects ---------------------------------------------------------------------------


def lost_write(call: KernelCall, trigger: Trigger, memory: Memory) -> None:
    """The result is computed into a temporary that never reaches the output."""
    result_of(call)


def scrambled(call: KernelCall, trigger: Trigger, memory: Memory) -> None:
    """The contiguous result is copied into the output's memory in its own order (no strides)."""
    _memory_order(call.output).copy_(result_of(call).reshape(-1))


def half_written(call: KernelCall, trigger: Trigger, memory: Memory) -> None:
    """Only the first half of the output is written (a grid sized for 4-byte elements)."""
    _write_where(call, result_of(call), _first(call, call.output.numel() // 2))


def offset_ignored(call: KernelCall, trigger: Trigger, memory: Memory) -> None:
    """The op reads its own values from the start of the storage instead of from the view."""
    output = call.output
    shifted = torch.as_strided(output, output.shape, output.stride(), 0)
    inputs = [shifted if t is output else t for t in call.inputs]
    output.copy_(result_of(call, inputs))


def rows_dropped(call: KernelCall, trigger: Trigger, memory: Memory) -> None:
    """Along a dimension longer than the bound, indices past the bound are never written."""
    written = torch.ones(call.output.shape, dtype=torch.bool)
    for dim, size in enumerate(call.output.shape):
        if size > trigger.bound:
            written.narrow(dim, trigger.bound, size - trigger.bound).fill_(False)
    _write_where(call, result_of(call), written)


def first_element(call: KernelCall, trigger: Trigger, memory: Memory) -> None:
    """A broadcast operand is read as a scalar: its first element, everywhere."""
    inputs = list(call.inputs)
    for index in broadcast(call):
        t = inputs[index]
        inputs[index] = torch.full(tuple(t.shape), t.flatten()[0].item(), dtype=t.dtype)
    call.output.copy_(result_of(call, inputs))


def empty_slot(call: KernelCall, trigger: Trigger, memory: Memory) -> None:
    """A repeated operand gets no buffer of its own: the kernel reads zeros in its place."""
    seen = [call.output.untyped_storage().data_ptr()]
    inputs = list(call.inputs)
    start = 1 if inputs and inputs[0] is call.output else 0
    for index in range(start, len(inputs)):
        pointer = inputs[index].untyped_storage().data_ptr()
        if pointer in seen:
            inputs[index] = torch.zeros(tuple(inputs[index].shape), dtype=inputs[index].dtype)
        seen.append(pointer)
    call.output.copy_(result_of(call, inputs))


def stale(call: KernelCall, trigger: Trigger, memory: Memory) -> None:
    """The cached buffer of the previous call with this shape and dtype is copied out."""
    key = cache_key(call)
    fresh = result_of(call)
    call.output.copy_(memory.results.get(key, fresh))
    memory.results[key] = fresh


def sign_dropped(call: KernelCall, trigger: Trigger, memory: Memory) -> None:
    """Every number argument loses its sign on the way into the kernel."""
    call.output.copy_(result_of(call, scalar=lambda x: abs(x)))


def flushed(call: KernelCall, trigger: Trigger, memory: Memory) -> None:
    """Number arguments below float16's normal range become exactly 0 inside the kernel."""
    call.output.copy_(result_of(call, scalar=lambda x: 0.0 if abs(x) < TINY else x))


Effect = Callable[[KernelCall, Trigger, Memory], None]
EFFECTS: dict[str, Effect] = {
    "lost-write": lost_write,
    "scrambled": scrambled,
    "half-written": half_written,
    "offset-ignored": offset_ignored,
    "rows-dropped": rows_dropped,
    "first-element": first_element,
    "empty-slot": empty_slot,
    "stale": stale,
    "sign-dropped": sign_dropped,
    "flushed": flushed,
}
_DENSE = ("lost-write", "scrambled", "half-written")
ALLOWED: dict[str, tuple[str, ...]] = {
    "transposed": _DENSE,
    "channels-last": _DENSE,
    "permuted": _DENSE,
    "step-sliced": ("lost-write", "half-written"),
    "storage-offset": ("lost-write", "offset-ignored", "half-written"),
    "bfloat16": ("lost-write", "half-written"),
    "large": ("lost-write", "half-written"),
    "long-dim": ("rows-dropped",),
    "unaligned": ("lost-write", "half-written"),
    "broadcast-input": ("first-element",),
    "aliased-input": ("empty-slot",),
    "repeat-call": ("stale",),
    "negative-scalar": ("sign-dropped",),
    "tiny-scalar": ("flushed",),
    "foreach": ("lost-write",),
}


def record_result(call: KernelCall, memory: Memory) -> None:
    """After a working call: what a shape-keyed cache would hold (for `stale`)."""
    memory.results[cache_key(call)] = call.output.clone()
