"""04.address: the storage slot of an element, from its index, the strides and the offset.

Checked against torch on about 260 random layouts of 0 to 5 dims (offsets, permuted, sliced,
expanded) and on a few whose addresses pass 2^31 and 2^32; a wrong rule is told its classic
cause: the offset left out, an index paired with another dim's stride, the last stride taken
as 1, a slot counted in bytes, three dims named one by one, a stride copied from the notebook's
example, torch or the course's calculator asked instead, arithmetic that stops at 32 bits.
"""

from __future__ import annotations

import itertools

from course.exercises import Exercise, register
from course.layout import oracle
from course.layout.exercises.common import Rule, judge, read_smallest
from course.layout.oracle import Mismatch


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
    params=("index", "stride", "offset"),
    success=lambda n: (
        f"right on all {n} layouts of 0 to 5 dims (offsets, permuted, sliced, expanded, "
        "addresses past 2^32): an element's address is the offset plus index times stride, "
        "dim by dim"
    ),
    truth=lambda index, stride, offset: (
        offset + sum(i * s for i, s in zip(index, stride, strict=True))
    ),
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
    causes=read_smallest(_another_dims_stride, _last_stride_one, _counted_in_bytes),
)

register(
    Exercise(
        "04.address",
        "Write address(index, stride, offset): the storage slot of the element at `index`, "
        "for any number of dims and any size of offset and strides (addresses past 2^31 too), "
        "with arithmetic on the tuples (torch is the checker's oracle: asking it does not count).",
        lambda fn: judge(fn, ADDRESS),
        "Start at the offset; each step along dim d moves stride[d] slots. Any number of dims.",
        minutes=8,
    )
)
