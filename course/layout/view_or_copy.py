"""View or copy? The two stride rules behind `view` vs `reshape`, and `clone`'s layout.

`view` never copies, so it must find strides for the new shape over the *same* storage; when
none exist it fails and `reshape` copies instead (ATen's computeStride). A copy made with
`preserve_format` (clone, zeros_like, empty_like) keeps the input's strides if they are dense,
else dense strides in the input's dim order (ATen's infer_dense_strides). Both work on plain
(shape, stride) tuples; `course.layout.calculator` wraps them for whole layouts.
"""

from __future__ import annotations

import math

from course.errors import CourseError

Dims = tuple[int, ...]


def contiguous_strides(shape: Dims) -> Dims:
    """Row-major strides; size-0 dims count as 1 (as in c10::contiguous_strides)."""
    strides, running = [], 1
    for size in reversed(shape):
        strides.append(running)
        running *= max(size, 1)
    return tuple(reversed(strides))


def infer_shape(shape: Dims, numel: int) -> Dims:
    """Resolve one -1 in a requested shape (torch's infer_size), or say why the shape is wrong."""
    if list(shape).count(-1) > 1:
        raise CourseError(f"shape {shape}: only one dim can be -1")
    if any(s < -1 for s in shape):
        raise CourseError(f"shape {shape}: sizes must be >= 0 (or -1 to infer one)")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or numel % known:
            raise CourseError(f"shape {shape} cannot hold {numel} elements")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if math.prod(shape) != numel:
        raise CourseError(
            f"shape {shape} holds {math.prod(shape)} elements, the tensor has {numel}"
        )
    return shape


def view_strides(old_shape: Dims, old_stride: Dims, shape: Dims) -> Dims | None:
    """ATen's computeStride: strides that make `shape` a view, or None if impossible.

    The old dims fall into chunks that are laid out back to back in memory; a view may split or
    merge dims only inside a chunk.
    """
    if not old_shape:
        return (1,) * len(shape)
    if math.prod(old_shape) == 0:
        return old_stride if old_shape == shape else contiguous_strides(shape)
    new_stride = [0] * len(shape)
    view_d = len(shape) - 1
    chunk_base = old_stride[-1]
    tensor_numel = view_numel = 1
    for tensor_d in reversed(range(len(old_shape))):
        tensor_numel *= old_shape[tensor_d]
        chunk_ends = tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1 and old_stride[tensor_d - 1] != tensor_numel * chunk_base
        )
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
            new_stride[view_d] = view_numel * chunk_base
            view_numel *= shape[view_d]
            view_d -= 1
        if view_numel != tensor_numel:
            return None
        if tensor_d > 0:
            chunk_base, tensor_numel, view_numel = old_stride[tensor_d - 1], 1, 1
    return tuple(new_stride) if view_d == -1 else None


def view_obstacle(shape: Dims, stride: Dims) -> str:
    """Name the first pair of neighbouring dims that are not back to back in memory."""
    dims = [d for d, size in enumerate(shape) if size != 1]
    for a, b in zip(dims, dims[1:], strict=False):
        needed = shape[b] * stride[b]
        if stride[a] != needed:
            return (
                f"dims {a} and {b} are not back to back in memory (stride[{a}] = {stride[a]}, "
                f"a merge needs size[{b}] * stride[{b}] = {needed}), and the new shape would "
                "have to merge or split across them"
            )
    return "the new shape splits the dims across a gap in memory"


def dense_strides_like(shape: Dims, stride: Dims) -> Dims:
    """at::infer_dense_strides: dense strides in the input's dim order (stride-0 dims stay put)."""
    ndim = len(shape)
    if ndim < 2:
        return (1,) * ndim
    perm = list(reversed(range(ndim)))

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = stride[d0], stride[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return 1 if s0 > s1 else -1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, ndim):  # insertion sort, exactly as ATen does it
        dim1 = i
        for dim0 in reversed(range(i)):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    strides, running = [0] * ndim, 1
    for d in perm:
        strides[d] = running
        running *= shape[d] if shape[d] > 1 else 1
    return tuple(strides)
