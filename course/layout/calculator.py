"""A pure layout calculator: predict shape, stride, storage offset and contiguity, as torch does.

Memory is flat. A tensor is a *layout* over a flat storage: element (i, j, ...) lives at
`offset + i*stride[0] + j*stride[1] + ...`. View operations (transpose, permute, slicing, narrow,
expand, unsqueeze, view, as_strided) only compute a new layout over the same storage; copies
(contiguous, clone, a reshape that cannot be a view) make a new storage. Every rule here is a
few lines of arithmetic over tuples, ported from ATen's own (named in each docstring), and
tests/layout/test_calculator.py checks the predictions against the installed torch for random
op chains.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import torch

from course.errors import CourseError, require_shape
from course.layout.opchain import Op
from course.layout.view_or_copy import (
    contiguous_strides,
    dense_strides_like,
    infer_shape,
    view_obstacle,
    view_strides,
)


@dataclass(frozen=True)
class Layout:
    """Shape, stride and storage offset of a tensor over a storage of `storage_size` elements.

    `storage_id` changes whenever an op copies into a new storage, so a chain shows where the
    copies happened.
    """

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int
    storage_size: int
    storage_id: int = 0

    def __post_init__(self) -> None:
        """A layout torch could make: one non-negative stride per dim, a non-negative offset,
        every element inside the storage (torch refuses negative strides and offsets too)."""
        shape = self.shape
        if not isinstance(shape, (tuple, list)) or not all(_whole(n) and n >= 0 for n in shape):
            raise CourseError(
                f"shape={shape!r} is not allowed: give a tuple of whole numbers, each >= 0"
            )
        shape, stride = tuple(shape), self.stride
        if not isinstance(stride, (tuple, list)) or not all(_whole(s) for s in stride):
            raise CourseError(
                f"stride={stride!r} is not allowed: give a tuple of whole numbers, one per dim "
                f"of shape {shape}"
            )
        if len(stride) != len(shape):
            raise CourseError(
                f"stride={tuple(stride)} has {len(stride)} entries but shape {shape} has "
                f"{len(shape)} dims: give one stride per dim"
            )
        if any(s < 0 for s in stride):
            raise CourseError(
                f"stride={tuple(stride)} is not allowed: strides are >= 0 (torch has no "
                "negative strides; flip() copies instead)"
            )
        for name in ("offset", "storage_size"):
            value = getattr(self, name)
            if not _whole(value) or value < 0:
                raise CourseError(f"{name}={value!r} is not allowed: give a whole number >= 0")
        if math.prod(shape):
            last = self.offset + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))
            if last >= self.storage_size:
                raise CourseError(
                    f"shape {shape}, stride {tuple(stride)}, offset {self.offset} reaches storage "
                    f"slot {last}, but the storage holds only {self.storage_size} elements"
                )
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", tuple(stride))

    @classmethod
    def contiguous(cls, shape: tuple[int, ...], storage_id: int = 0) -> Layout:
        """A fresh row-major tensor of `shape` (what torch.empty(shape) makes)."""
        shape = require_shape("shape", shape, smallest=0, max_elements=None)
        return cls(shape, contiguous_strides(shape), 0, math.prod(shape), storage_id)

    @classmethod
    def of(cls, tensor: torch.Tensor) -> Layout:
        """The layout of a real tensor (storage size in elements)."""
        size = tensor.untyped_storage().nbytes() // tensor.element_size()
        return cls(tuple(tensor.shape), tuple(tensor.stride()), tensor.storage_offset(), size)

    @classmethod
    def strided(cls, shape: tuple[int, ...], stride: tuple[int, ...], offset: int = 0) -> Layout:
        """Any strides over the smallest storage that holds every element (as notebook 04 draws
        layouts: shape, stride and offset, the storage implied)."""
        shape = require_shape("shape", shape, smallest=0, max_elements=None)
        if not isinstance(stride, (tuple, list)) or len(stride) != len(shape):
            raise CourseError(
                f"stride={stride!r} is not allowed: give a tuple of {len(shape)} whole numbers, "
                f"one per dim of shape {shape}"
            )
        if not _whole(offset) or offset < 0:
            raise CourseError(f"offset={offset!r} is not allowed: give a whole number >= 0")
        stride = tuple(stride)
        if not all(_whole(s) and s >= 0 for s in stride):
            raise CourseError(
                f"stride={stride!r} is not allowed: strides are whole numbers >= 0 (torch has "
                "no negative strides; flip() copies instead)"
            )
        span = sum((n - 1) * s for n, s in zip(shape, stride, strict=True))
        return cls(shape, stride, offset, offset + 1 + span if math.prod(shape) else offset)

    def __str__(self) -> str:
        return f"shape {self.shape}, stride {self.stride}, offset {self.offset}"

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def tensor(self) -> torch.Tensor:
        """A real tensor with this layout over `arange`: each element's value is its address."""
        storage = torch.arange(max(self.storage_size, 1))
        return storage.as_strided(self.shape, self.stride, self.offset)

    def is_contiguous(self) -> bool:
        """torch's rule (TensorImpl::compute_contiguous): row-major, ignoring size-1 dims."""
        if self.numel == 0:
            return True
        expected = 1
        for size, stride in zip(reversed(self.shape), reversed(self.stride), strict=True):
            if size != 1:
                if stride != expected:
                    return False
                expected *= size
        return True

    def is_non_overlapping_and_dense(self) -> bool:
        """Every storage slot in the span used exactly once, in *some* dim order."""
        if self.is_contiguous():
            return True
        if len(self.shape) == 1:
            return self.shape[0] < 2 or self.stride[0] == 1
        order = sorted(range(len(self.shape)), key=lambda d: (self.shape[d] < 2, self.stride[d]))
        required = 1
        for d in order:
            if self.shape[d] < 2:
                return True
            if self.stride[d] != required:
                return False
            required *= self.shape[d]
        return True

    def storage_index(self, index: tuple[int, ...]) -> int:
        """Where logical element `index` lives in storage: offset + sum(i * stride)."""
        if not isinstance(index, (tuple, list)) or not all(_whole(i) for i in index):
            raise CourseError(
                f"index {index!r} is not allowed: give a tuple of whole numbers, one per dim "
                f"(shape {self.shape}), e.g. {tuple(0 for _ in self.shape)}"
            )
        if len(index) != len(self.shape):
            raise CourseError(
                f"index {index} has {len(index)} entries but the tensor has "
                f"{len(self.shape)} dims (shape {self.shape})"
            )
        for dim, (i, size) in enumerate(zip(index, self.shape, strict=True)):
            if not 0 <= i < size:
                raise CourseError(
                    f"index {i} is out of range for dim {dim} of size {size} "
                    f"(allowed 0 to {size - 1})"
                )
        return self.offset + sum(i * s for i, s in zip(index, self.stride, strict=True))


def explain_contiguity(layout: Layout) -> str:
    """One sentence: why this layout is (not) contiguous, naming the first offending dim."""
    if layout.numel == 0:
        return "contiguous: it has no elements"
    expected = 1
    for dim in reversed(range(len(layout.shape))):
        size, stride = layout.shape[dim], layout.stride[dim]
        if size == 1:
            continue
        if stride != expected:
            why = (
                " (stride 0: an expanded dim, every index reads the same slot)"
                if stride == 0
                else ""
            )
            return (
                f"not contiguous: dim {dim} has stride {stride}, but row-major order needs "
                f"{expected} there{why}"
            )
        expected *= size
    return "contiguous: walking the indices in row-major order reads storage slot after slot"


def _wrap(dim: int, ndim: int) -> int:
    """Wrap a possibly negative dim, as torch's maybe_wrap_dim does (0-dim counts as 1-dim)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise CourseError(
            f"dim {dim} is out of range for a {ndim}-d tensor (allowed {-n} to {n - 1})"
        )
    return dim % n


def _new_storage(layout: Layout, stride: tuple[int, ...]) -> Layout:
    """A copy into fresh storage with the given strides (dense, so the storage holds numel)."""
    return Layout(layout.shape, stride, 0, layout.numel, layout.storage_id + 1)


def _permuted(layout: Layout, dims: tuple[int, ...]) -> Layout:
    ndim = len(layout.shape)
    wrapped = tuple(_wrap(d, ndim) for d in dims)
    if len(dims) != ndim or sorted(wrapped) != list(range(ndim)):
        raise CourseError(f"permute{dims} must name each of the {ndim} dims exactly once")
    return replace(
        layout,
        shape=tuple(layout.shape[d] for d in wrapped),
        stride=tuple(layout.stride[d] for d in wrapped),
    )


def _transposed(layout: Layout, d0: int, d1: int) -> Layout:
    order = list(range(len(layout.shape)))
    a, b = _wrap(d0, len(order)), _wrap(d1, len(order))
    if not order:
        return layout
    order[a], order[b] = order[b], order[a]
    return _permuted(layout, tuple(order))


def _t(layout: Layout, name: str) -> Layout:
    """t() takes up to 2 dims and refuses more. `.T` follows torch: any rank, reversing the
    dims (the identity for 0-D and 1-D), with torch's deprecation warning on other ranks than
    2 (TensorShape.cpp numpy_T), since torch will refuse those in a future release."""
    ndim = len(layout.shape)
    if name == "t()" and ndim > 2:
        raise CourseError(
            f"t() needs at most 2 dims, this tensor has {ndim}; use permute(...) or "
            "transpose(d0, d1)"
        )
    if name == ".T" and ndim != 2:
        warnings.warn(T_DEPRECATED_0D if ndim == 0 else T_DEPRECATED, UserWarning, stacklevel=4)
    return _permuted(layout, tuple(reversed(range(ndim))))


# torch's own warnings for .T on other ranks than 2 (aten/src/ATen/native/TensorShape.cpp)
T_DEPRECATED_0D = (
    "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."
)
T_DEPRECATED = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
    "deprecated and it will throw an error in a future release. Consider `x.mT` to transpose "
    "batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
    "dimensions of a tensor."
)


def _unfold(layout: Layout, dim: int, size: int, step: int) -> Layout:
    """ATen's unfold(): windows of `size` every `step` along `dim`, as a new last dim with the
    dim's old stride; the dim keeps (n - size) // step + 1 windows, its stride times `step`."""
    ndim = len(layout.shape)
    dim = _wrap(dim, ndim)
    largest = layout.shape[dim] if ndim else 1
    if size > largest:
        raise CourseError(f"unfold: maximum size for dim {dim} is {largest} but size is {size}")
    if size < 0:
        raise CourseError(f"unfold: size is {size} but must be >= 0")
    if step <= 0:
        raise CourseError(f"unfold: step is {step} but must be > 0")
    shape = [*layout.shape, size]
    stride = [*layout.stride, layout.stride[dim] if ndim else 1]
    if dim < ndim:
        shape[dim] = (shape[dim] - size) // step + 1
        stride[dim] *= step
    return replace(layout, shape=tuple(shape), stride=tuple(stride))


def _slice(
    layout: Layout, dim: int, start: int | None, stop: int | None, step: int | None
) -> Layout:
    """ATen's slice(): clamp start/stop into [0, size], multiply the stride by the step."""
    step = 1 if step is None else step
    if step <= 0:
        raise CourseError(f"slice step {step} is not allowed: torch needs a step greater than zero")
    size = layout.shape[dim]
    begin = 0 if start is None else start + size if start < 0 else start
    end = size if stop is None else stop + size if stop < 0 else stop
    begin = min(max(begin, 0), size)
    end = min(max(end, begin), size)
    shape, stride = list(layout.shape), list(layout.stride)
    shape[dim] = (end - begin + step - 1) // step
    stride[dim] *= step
    return replace(
        layout,
        shape=tuple(shape),
        stride=tuple(stride),
        offset=layout.offset + begin * layout.stride[dim],
    )


def _select(layout: Layout, dim: int, index: int) -> Layout:
    size = layout.shape[dim]
    if not -size <= index < size:
        raise CourseError(f"index {index} is out of range for dim {dim} of size {size}")
    index %= size
    return Layout(
        layout.shape[:dim] + layout.shape[dim + 1 :],
        layout.stride[:dim] + layout.stride[dim + 1 :],
        layout.offset + index * layout.stride[dim],
        layout.storage_size,
        layout.storage_id,
    )


def _unsqueeze(layout: Layout, dim: int) -> Layout:
    """inferUnsqueezeGeometry: the new dim's stride is size*stride of the dim it lands before."""
    ndim = len(layout.shape)
    if not -(ndim + 1) <= dim <= ndim:
        raise CourseError(
            f"unsqueeze({dim}) is out of range for a {ndim}-d tensor "
            f"(allowed {-(ndim + 1)} to {ndim})"
        )
    dim %= ndim + 1
    stride = 1 if dim >= ndim else layout.shape[dim] * layout.stride[dim]
    return replace(
        layout,
        shape=layout.shape[:dim] + (1,) + layout.shape[dim:],
        stride=layout.stride[:dim] + (stride,) + layout.stride[dim:],
    )


def _squeeze(layout: Layout, *dims: int) -> Layout:
    ndim = len(layout.shape)
    drop = {_wrap(d, ndim) for d in dims} if dims else set(range(ndim))
    keep = [d for d in range(ndim) if not (d in drop and layout.shape[d] == 1)]
    return replace(
        layout,
        shape=tuple(layout.shape[d] for d in keep),
        stride=tuple(layout.stride[d] for d in keep),
    )


def _index(layout: Layout, items: tuple) -> Layout:
    """Python indexing, item by item as torch's applySlicing does: int, slice, None, `...`."""
    consuming = sum(1 for item in items if item is not None and item is not Ellipsis)
    if list(items).count(Ellipsis) > 1:
        raise CourseError("an index can hold only one '...'")
    if consuming > len(layout.shape):
        raise CourseError(f"too many indices: {consuming} for a {len(layout.shape)}-d tensor")
    skipped_by_ellipsis = len(layout.shape) - consuming
    dim = 0
    for item in items:
        if item is Ellipsis:
            dim += skipped_by_ellipsis
        elif item is None:
            layout = _unsqueeze(layout, dim)
            dim += 1
        elif isinstance(item, slice):
            layout = _slice(layout, dim, item.start, item.stop, item.step)
            dim += 1
        else:
            layout = _select(layout, dim, item)
    return layout


def _narrow(layout: Layout, dim: int, start: int, length: int) -> Layout:
    if not layout.shape:
        raise CourseError("narrow() cannot be applied to a 0-dim tensor")
    dim = _wrap(dim, len(layout.shape))
    size = layout.shape[dim]
    if length < 0:
        raise CourseError(f"narrow(): length {length} must be non-negative")
    if not -size <= start <= size:
        raise CourseError(
            f"narrow(): start {start} is out of range for size {size} (allowed {-size} to {size})"
        )
    start = start + size if start < 0 else start
    if start + length > size:
        raise CourseError(
            f"narrow(): start {start} + length {length} exceeds dim {dim}'s size {size}"
        )
    return _slice(layout, dim, start, start + length, 1)


def _expand(layout: Layout, sizes: tuple[int, ...]) -> Layout:
    """inferExpandGeometry: size-1 (and new leading) dims grow with stride 0, sharing one slot."""
    ndim, old = len(sizes), len(layout.shape)
    if ndim < old:
        raise CourseError(f"expand{sizes} gives {ndim} sizes, fewer than the tensor's {old} dims")
    shape, stride = [0] * ndim, [0] * ndim
    for i in reversed(range(ndim)):
        dim = i - (ndim - old)
        size = layout.shape[dim] if dim >= 0 else 1
        st = (
            layout.stride[dim]
            if dim >= 0
            else (shape[i + 1] * stride[i + 1] if i + 1 < ndim else 1)
        )
        target = sizes[i]
        if target == -1:
            if dim < 0:
                raise CourseError(f"expand: -1 is not allowed for the new leading dim {i}")
            target = size
        if target < 0:
            raise CourseError(f"expand: size {target} is not allowed (use -1 to keep a size)")
        if size != target:
            if size != 1:
                raise CourseError(
                    f"expand: dim {i} has size {size}, which cannot become {target}; "
                    "only size-1 dims can be expanded"
                )
            size, st = target, 0
        shape[i], stride[i] = size, st
    if old == 0:
        stride = [0] * ndim
    return replace(layout, shape=tuple(shape), stride=tuple(stride))


def view_verdict(layout: Layout, shape: tuple[int, ...]) -> tuple[Layout | None, str]:
    """Can `shape` be a view? Returns (the view or None, a sentence saying why)."""
    shape = infer_shape(tuple(shape), layout.numel)
    stride = view_strides(layout.shape, layout.stride, shape)
    if stride is not None:
        return replace(layout, shape=shape, stride=stride), (
            f"view{shape} is possible: same storage, stride {stride}, no copy"
        )
    obstacle = view_obstacle(layout.shape, layout.stride)
    return None, f"view{shape} is impossible: {obstacle}; reshape{shape} would copy"


def _view(layout: Layout, shape: tuple[int, ...]) -> Layout:
    result, reason = view_verdict(layout, shape)
    if result is None:
        raise CourseError(reason + " (or call .contiguous() first)")
    return result


def _reshape(layout: Layout, shape: tuple[int, ...]) -> Layout:
    result, _ = view_verdict(layout, shape)
    if result is not None:
        return result
    shape = infer_shape(shape, layout.numel)
    return Layout(shape, contiguous_strides(shape), 0, layout.numel, layout.storage_id + 1)


def _as_strided(layout: Layout, sizes: tuple, strides: tuple, offset: int | None = None) -> Layout:
    offset = layout.offset if offset is None else offset
    if len(sizes) != len(strides):
        raise CourseError(f"as_strided: {len(sizes)} sizes but {len(strides)} strides")
    if any(s < 0 for s in sizes) or any(s < 0 for s in strides) or offset < 0:
        raise CourseError("as_strided: sizes, strides and the offset must be >= 0")
    if all(sizes):
        needed = offset + 1 + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
        if needed > layout.storage_size:
            raise CourseError(
                f"as_strided{tuple(sizes)}, stride {tuple(strides)}, offset {offset} "
                f"reaches storage slot {needed - 1}, but the storage has only "
                f"{layout.storage_size} elements"
            )
    return replace(layout, shape=tuple(sizes), stride=tuple(strides), offset=offset)


def _clone(layout: Layout, memory_format: str = "preserve_format") -> Layout:
    """clone() = empty_like(preserve_format) + copy: dense strides stay, else the dim order does."""
    if memory_format == "contiguous_format":
        return _new_storage(layout, contiguous_strides(layout.shape))
    if layout.is_non_overlapping_and_dense():
        return _new_storage(layout, layout.stride)
    return _new_storage(layout, dense_strides_like(layout.shape, layout.stride))


def _contiguous(layout: Layout) -> Layout:
    """contiguous() returns the tensor itself when it already is contiguous: no copy."""
    return (
        layout if layout.is_contiguous() else _new_storage(layout, contiguous_strides(layout.shape))
    )


_RULES = {
    "T": lambda lay: _t(lay, ".T"),
    "t": lambda lay: _t(lay, "t()"),
    "transpose": _transposed,
    "permute": _permuted,
    "index": lambda lay, *items: _index(lay, items),
    "narrow": _narrow,
    "expand": _expand,
    "unsqueeze": _unsqueeze,
    "squeeze": _squeeze,
    "view": _view,
    "reshape": _reshape,
    "as_strided": _as_strided,
    "unfold": _unfold,
    "contiguous": _contiguous,
    "clone": _clone,
}


def apply(layout: Layout, op: Op) -> Layout:
    """The layout after one op, or a CourseError saying why torch would refuse it."""
    name = getattr(op, "name", None)
    if name not in _RULES:
        raise CourseError(
            f"the calculator has no rule for {name if name else op!r}; "
            f"it knows: {', '.join(_RULES)}"
        )
    _require_whole_arguments(op)
    return _RULES[name](layout, *op.args)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _require_whole_arguments(op: Op) -> None:
    """Sizes, dims, indices, steps and strides are whole numbers: a 1.5 would otherwise become a
    fractional shape. None stands for "insert a dim" in an index, "from the start/to the end" in a
    slice and "keep the offset" in as_strided; clone takes a memory-format name."""
    for position, value in enumerate(op.args):
        parts = value if isinstance(value, (tuple, list)) else (value,)
        for part in parts:
            if isinstance(part, slice):
                bad = [
                    x for x in (part.start, part.stop, part.step) if x is not None and not _whole(x)
                ]
            elif part is None:
                bad = (
                    []
                    if op.name == "index" or (op.name == "as_strided" and position == 2)
                    else [None]
                )
            else:
                allowed = (
                    _whole(part)
                    or part is Ellipsis
                    or (op.name == "clone" and isinstance(part, str))
                )
                bad = [] if allowed else [part]
            if bad:
                raise CourseError(
                    f"{op.name}: argument {bad[0]!r} is not allowed; sizes, dims, indices, steps "
                    "and strides are whole numbers (None only inside [...] and slices)"
                )


def apply_chain(layout: Layout, ops: list[Op]) -> list[Layout]:
    """The layout after each op of a chain (the first entry is the input)."""
    layouts = [layout]
    for op in ops:
        layouts.append(apply(layouts[-1], op))
    return layouts


def apply_torch(tensor: torch.Tensor, op: Op) -> torch.Tensor:
    """Run the same op on a real tensor: torch is the oracle the calculator is tested against."""
    if op.name == "T":
        return tensor.T
    if op.name == "index":
        return tensor[op.args]
    if op.name == "clone":
        return tensor.clone(
            memory_format=getattr(torch, op.args[0] if op.args else "preserve_format")
        )
    return getattr(tensor, op.name)(*op.args)
