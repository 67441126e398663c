"""Hypothesis strategies for layout tests: random shapes and chains of view operations.

Chains are drawn op by op against a real tensor, so most steps are valid for the shape they
meet (a few are deliberately out of range, to test that the calculator refuses what torch
refuses). Sizes stay tiny: layout rules do not care about big numbers, and small sizes make the
corner cases (size 0, size 1, stride 0) common.
"""

from __future__ import annotations

import math

import torch
from hypothesis import strategies as st

from course.layout.calculator import apply_torch
from course.layout.opchain import Op

shapes = st.lists(st.sampled_from([1, 1, 2, 2, 3, 3, 4, 0]), min_size=1, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


def _dim(ndim: int) -> st.SearchStrategy[int]:
    return st.integers(-max(ndim, 1), max(ndim, 1) - 1)


def _index_item(size: int) -> st.SearchStrategy[object]:
    bound = st.none() | st.integers(-size - 2, size + 2)
    return st.one_of(
        st.builds(slice, bound, bound, st.sampled_from([None, 1, 2, 3])),
        st.integers(-size, size - 1) if size else st.builds(slice, st.none(), st.none()),
    )


@st.composite
def index_ops(draw, shape: tuple[int, ...]) -> Op:
    n_items = draw(st.integers(0, len(shape)))
    items = [draw(_index_item(size)) for size in shape[:n_items]]
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    if n_items < len(shape) and draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return Op("index", tuple(items) or (slice(None),))


@st.composite
def same_numel_shapes(draw, numel: int) -> tuple[int, ...]:
    """A shape with `numel` elements, sometimes with one -1 or extra size-1 dims."""
    factors, rest = [], numel
    while rest > 1 and len(factors) < 3:
        divisors = [d for d in range(2, rest + 1) if rest % d == 0]
        factor = draw(st.sampled_from(divisors))
        factors.append(factor)
        rest //= factor
    factors = factors + [rest] if rest != 1 or not factors else factors
    if numel == 0:
        factors = [0, draw(st.integers(1, 3))]
    factors = draw(st.permutations(factors))
    if draw(st.booleans()):
        factors.insert(draw(st.integers(0, len(factors))), 1)
    if numel and draw(st.booleans()):
        factors[draw(st.integers(0, len(factors) - 1))] = -1
    return tuple(factors)


@st.composite
def expand_sizes(draw, shape: tuple[int, ...]) -> tuple[int, ...]:
    sizes = [draw(st.sampled_from([-1, s])) if s != 1 else draw(st.integers(-1, 3)) for s in shape]
    leading = draw(st.lists(st.integers(0, 3), max_size=2))
    return tuple(leading + sizes)


@st.composite
def as_strided_args(draw, storage_size: int) -> tuple:
    ndim = draw(st.integers(1, 3))
    sizes = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    strides = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    span = sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
    fits = max(storage_size - span - 1, 0)
    offset = draw(st.integers(0, fits) | st.just(fits + 1))  # fits + 1: sometimes out of bounds
    return (sizes, strides, offset)


@st.composite
def ops_for(draw, tensor: torch.Tensor) -> Op:
    """One op drawn to suit `tensor`'s current shape."""
    shape, ndim = tuple(tensor.shape), tensor.dim()
    choices = [
        "transpose",
        "permute",
        "unsqueeze",
        "squeeze",
        "view",
        "reshape",
        "contiguous",
        "clone",
        "expand",
        "as_strided",
    ]
    choices += ["index", "index", "clone", "narrow"] if ndim else []
    choices += ["t"] if ndim <= 2 else []
    choices += ["T", "unfold"]  # .T on other ranks than 2: torch warns, reverses the dims
    name = draw(st.sampled_from(choices))
    if name == "index":
        return draw(index_ops(shape))
    if name == "transpose":
        return Op(name, (draw(_dim(ndim)), draw(_dim(ndim))))
    if name == "permute":
        order = draw(st.permutations(range(ndim)))
        return Op(name, (tuple(d - ndim if draw(st.booleans()) else d for d in order),))
    if name == "unsqueeze":
        return Op(name, (draw(st.integers(-ndim - 1, ndim)),))
    if name == "squeeze":
        return Op(name, draw(st.sampled_from([(), (0,), (-1,)])) if ndim else ())
    if name == "narrow":
        dim = draw(_dim(ndim))
        size = shape[dim]
        start = draw(st.integers(-size, size))
        return Op(name, (dim, start, draw(st.integers(0, size - (start % size if size else 0)))))
    if name in ("view", "reshape"):
        return Op(name, (draw(same_numel_shapes(math.prod(shape))),))
    if name == "expand":
        return Op(name, (draw(expand_sizes(shape)),))
    if name == "as_strided":
        storage = tensor.untyped_storage().nbytes() // tensor.element_size()
        return Op(name, draw(as_strided_args(storage)))
    if name == "clone":
        return Op(name, draw(st.sampled_from([(), ("preserve_format",), ("contiguous_format",)])))
    if name == "unfold":
        dim = draw(_dim(ndim))
        largest = shape[dim] if ndim else 1
        return Op(name, (dim, draw(st.integers(-1, largest + 1)), draw(st.integers(-1, 3))))
    return Op(name)


@st.composite
def chains(draw, max_ops: int = 5) -> tuple[tuple[int, ...], list[Op]]:
    """A base shape and a chain of ops; the chain stops early where torch refuses a step."""
    shape = draw(shapes)
    tensor, ops = torch.empty(shape), []
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(ops_for(tensor))
        ops.append(op)
        try:
            tensor = apply_torch(tensor, op)
        except (RuntimeError, IndexError, ValueError):
            break
    return shape, ops
