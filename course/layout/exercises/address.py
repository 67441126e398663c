"""04.address: the storage slot of an element, from its index, the strides and the offset.

Checked against torch on about 250 random layouts of 0 to 5 dims (offsets, permuted, sliced,
expanded); a wrong rule is told its classic cause: the offset left out, an index paired with
another dim's stride, the last stride taken as 1, a slot counted in bytes, three dims named one
by one, a stride copied from the notebook's example, torch or the course's calculator asked
instead.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch

from course.exercises import Exercise, Verdict, passed, register
from course.layout import oracle
from course.layout.calculator import Layout
from course.layout.exercises.common import Rule, judge, smallest
from course.layout.oracle import Mismatch


def _address_reference():
    def address(index, stride, offset):
        return offset + sum(i * s for i, s in zip(index, stride, strict=True))

    return address


def _another_dims_stride(m: Mismatch) -> str | None:
    index, stride, offset = m.case.args
    for order in itertools.permutations(range(len(stride))):
        if list(order) != sorted(order) and m.yours == offset + sum(
            i * stride[d] for i, d in zip(index, order, strict=True)
        ):
            return (
                "it multiplies an index by another dim's stride. Index d counts steps along dim "
                "d, and each of those steps jumps stride[d] slots: pair them dim by dim"
            )
    return None


def _last_stride_one(m: Mismatch) -> str | None:
    index, stride, offset = m.case.args
    if not stride or stride[-1] == 1:
        return None
    rowwise = offset + sum(i * s for i, s in zip(index[:-1], stride[:-1], strict=True)) + index[-1]
    if m.yours != rowwise:
        return None
    return (
        "it takes one step along the last dim to be 1 slot. That holds in a row-major tensor, "
        f"but here the last dim's stride is {stride[-1]} (a transpose, a step slice or an "
        "expanded dim): use every dim's stride, the last one too"
    )


def _counted_in_bytes(m: Mismatch) -> str | None:
    expected = m.case.expected
    size = next((k for k in (2, 4, 8) if expected and m.yours == k * expected), None)
    if size is None:
        return None
    return (
        f"your slot is {size} times torch's: it counts bytes ({size} per element). The storage "
        "offset and the strides count elements, not bytes, so the slot needs no element size"
    )


def _not_an_int(m: Mismatch) -> str | None:
    if isinstance(m.yours, int) and not isinstance(m.yours, bool):
        return None
    return f"return the slot as an int, not {type(m.yours).__name__} {m.yours!r}"


ADDRESS = Rule(
    title="your address rule",
    signature="def address(index, stride, offset)",
    cases=oracle.address_cases,
    reference=_address_reference(),
    params=("index", "stride", "offset"),
    form=_not_an_int,
    probes={
        "index": lambda args: [tuple(i + 1 for i in args[0])] if args[0] else [],
        "stride": lambda args: [tuple(s + 1 for s in args[1])] if args[1] else [],
        "offset": lambda args: [args[2] + 3],
    },
    why={
        "index": "The index says which element: each entry counts steps along its dim.",
        "stride": "The strides say how far one step along each dim jumps; the example's x had "
        "one layout of many.",
        "offset": "The storage offset is the slot where the tensor starts (a tensor made by "
        "slicing, like x[1:], starts inside its storage): every address counts from it.",
    },
    causes=(
        lambda misses: smallest(misses, _another_dims_stride),
        lambda misses: smallest(misses, _last_stride_one),
        lambda misses: smallest(misses, _counted_in_bytes),
    ),
)


def check_address(fn: object) -> Verdict:
    """04.address: address(index, stride, offset) against torch on ~250 random layouts."""
    verdict, count = judge(fn, ADDRESS)
    return verdict or passed(
        f"right on all {count} random layouts of 0 to 5 dims (offsets, permuted, sliced, "
        "expanded): an element's address is the offset plus index times stride, dim by dim"
    )


def _no_offset():
    def address(index, stride, offset):
        return sum(i * s for i, s in zip(index, stride, strict=True))

    return address


def _reversed_strides():
    def address(index, stride, offset):
        return offset + sum(i * s for i, s in zip(index, reversed(stride), strict=True))

    return address


def _last_step_is_one():
    def address(index, stride, offset):
        *outer, last = index
        return offset + sum(i * s for i, s in zip(outer, stride, strict=False)) + last

    return address


def _three_named_dims():
    def address(index, stride, offset):
        if len(index) == 0:
            return offset
        if len(index) == 1:
            return offset + index[0] * stride[0]
        if len(index) == 2:
            return offset + index[0] * stride[0] + index[1] * stride[1]
        return offset + index[0] * stride[0] + index[1] * stride[1] + index[2] * stride[2]

    return address


def _strides_of_the_example():
    def address(index, stride, offset):
        return offset + index[0] * 6 + index[1]  # x = torch.arange(24).view(4, 6): stride (6, 1)

    return address


def _last_two_dims():
    def address(index, stride, offset):  # rows and columns: the last two dims
        pairs = list(zip(index, stride, strict=True))[-2:]
        return offset + sum(i * s for i, s in pairs)

    return address


def _scalar_at_slot_zero():
    def address(index, stride, offset):
        if not index:
            return 0  # "a scalar has no dims, so it sits at the start"
        return offset + sum(i * s for i, s in zip(index, stride, strict=True))

    return address


def _stride_zero_as_one():
    def address(index, stride, offset):  # "a stride of 0 cannot be right: one step moves 1"
        return offset + sum(i * max(s, 1) for i, s in zip(index, stride, strict=True))

    return address


def _numpy_dot():
    def address(index, stride, offset):
        return offset + int(np.dot(index, stride)) if index else offset

    return address


def _a_float_slot():
    def address(index, stride, offset):
        return float(offset + sum(i * s for i, s in zip(index, stride, strict=True)))

    return address


def _slot_in_bytes():
    def address(index, stride, offset):  # "an address is in bytes: 4 per float32"
        return 4 * (offset + sum(i * s for i, s in zip(index, stride, strict=True)))

    return address


def _asks_torch():
    def address(index, stride, offset):
        storage = torch.arange(10_000)  # each value is its own address
        view = storage.as_strided([i + 1 for i in index], stride, offset)
        return view[tuple(index)].item()

    return address


def _course_calculator():
    def address(index, stride, offset):
        layout = Layout.strided(tuple(i + 1 for i in index), tuple(stride), offset)
        return layout.storage_index(tuple(index))

    return address


register(
    Exercise(
        "04.address",
        "Write address(index, stride, offset): the storage slot of the element at `index`, "
        "with arithmetic on the tuples (torch is the checker's oracle: asking it does not count).",
        check_address,
        "Start at the offset; each step along dim d moves stride[d] slots. Any number of dims.",
        _address_reference,
        (
            _no_offset,
            _reversed_strides,
            _last_step_is_one,
            _three_named_dims,
            _strides_of_the_example,
            _asks_torch,
            _course_calculator,
            _last_two_dims,
            _scalar_at_slot_zero,
            _stride_zero_as_one,
            _numpy_dot,
            _a_float_slot,
            _slot_in_bytes,
        ),
    )
)
