"""04.is_contiguous: torch's contiguity rule, from a shape and its strides.

Checked against `Tensor.is_contiguous()` on 300 random layouts of 0 to 5 dims and 24 corners
they seldom reach (`contiguity_cases`). A wrong rule says "contiguous" where torch does not, or
the other way round; the feedback takes the smallest case of each and says what torch sees there:
an expanded dim that repeats, gaps, a dense layout in another dim order (the story's transposed
weight), a size-1 dim whose stride never counts, an empty tensor.
"""

from __future__ import annotations

import functools
import math
import random

from course.exercises import Exercise, register
from course.layout import oracle
from course.layout.calculator import Layout
from course.layout.exercises.common import Finding, Rule, judge, plain
from course.layout.oracle import Case, Mismatch
from course.layout.view_or_copy import contiguous_strides


def _first_break(layout: Layout) -> tuple[int, int]:
    """(dim, the stride row-major order needs there) at the first dim, from the last, that
    breaks the rule."""
    expected = 1
    for dim in reversed(range(len(layout.shape))):
        size, step = layout.shape[dim], layout.stride[dim]
        if size != 1:
            if step != expected:
                return dim, expected
            expected *= size
    raise ValueError(f"{layout} is contiguous")


def why_not(layout: Layout) -> str:
    """What torch sees in a layout it calls non-contiguous."""
    repeated = [
        d
        for d, (n, s) in enumerate(zip(layout.shape, layout.stride, strict=True))
        if s == 0 and n > 1
    ]
    if repeated:
        return (
            f"dim {repeated[0]} has stride 0, so every index along it reads the same slot (an "
            "expanded dim repeats its elements): a walk in row-major order never moves on"
        )
    dim, needed = _first_break(layout)
    stride = layout.stride[dim]
    if layout.is_non_overlapping_and_dense():
        return (
            "it uses every slot of its span once, but not in row-major order: the last dim must "
            "step 1 slot, the dim before it a whole row, and so on. A dense layout in another "
            f"dim order, like x.T, is not contiguous (dim {dim} steps {stride} slots, row-major "
            f"order needs {needed})"
        )
    span = 1 + sum((n - 1) * s for n, s in zip(layout.shape, layout.stride, strict=True))
    if span > layout.numel:
        return (
            f"its elements leave gaps in memory: dim {dim} steps {stride} slots where row-major "
            f"order needs {needed}, so the walk skips slots"
        )
    return (
        f"its elements overlap: dim {dim} steps {stride} slots where row-major order needs "
        f"{needed}, so two indices reach the same slot"
    )


def why_so(layout: Layout) -> str:
    """What makes a layout torch calls contiguous pass, where a stricter rule would not."""
    if not layout.numel:
        return "this tensor has no elements: there is no slot it could read out of order"
    if not layout.shape:
        return "a 0-dim tensor holds one element: nothing can be out of order"
    row_major = contiguous_strides(layout.shape)
    odd = [
        d
        for d, (n, s) in enumerate(zip(layout.shape, layout.stride, strict=True))
        if n == 1 and s != row_major[d]
    ]
    if odd:
        return (
            f"dim {odd[0]} has size 1, so it is never stepped along: its stride "
            f"({layout.stride[odd[0]]}) never matters"
        )
    return "walking its indices in row-major order reads slot after slot"


def _not_a_bool(m: Mismatch) -> str | None:
    if isinstance(m.yours, bool):
        return None
    return f"return True or False (a bool), not {type(m.yours).__name__} {m.yours!r}"


def _both_ways(misses: list[Mismatch]) -> Finding | None:
    """The smallest layout called contiguous that is not, and the smallest the other way."""
    answered = plain(misses)
    says_yes = next((m for m in answered if m.yours is True), None)
    says_no = next((m for m in answered if m.yours is False), None)
    parts = []
    if says_yes:
        parts.append(
            f"you say contiguous where torch says not, on {says_yes.case.label}: "
            f"{why_not(says_yes.case.layout)}"
        )
    if says_no:
        parts.append(
            f"you say not contiguous where torch says it is, on {says_no.case.label}: "
            f"{why_so(says_no.case.layout)}"
        )
    if not parts:
        return None
    shown = min((m for m in (says_yes, says_no) if m), key=lambda m: misses.index(m))
    return Finding(". And ".join(parts), shown)


@functools.cache
def contiguity_cases() -> tuple[Case, ...]:
    """The oracle's random layouts, and two corners they seldom reach (drawn from a private
    generator): empty tensors whose other dims have any strides (torch calls every one
    contiguous, so a rule that skips a size-0 dim like a size-1 dim, and never asks whether
    the tensor is empty, is wrong there), and layouts that fill their span exactly with
    strides shrinking to 1, yet overlap and leave a gap ((2, 2, 2) with stride (3, 3, 1):
    "no gaps, strides decreasing" calls that contiguous)."""
    rng = random.Random(6)
    corners = [_empty_any_strides(rng) for _ in range(12)]
    corners += [_fills_its_span(rng) for _ in range(12)]
    return oracle.contiguity_cases() + tuple(
        Case(v, (v.shape, v.stride), v.tensor().is_contiguous(), str(v)) for v in corners
    )


def _empty_any_strides(rng: random.Random) -> Layout:
    shape = [rng.randint(1, 4) for _ in range(rng.randint(2, 4))]
    shape[rng.randrange(len(shape))] = 0
    return Layout.strided(tuple(shape), tuple(rng.randint(0, 12) for _ in shape))


def _fills_its_span(rng: random.Random) -> Layout:
    """Strides that shrink to 1 over as many slots as elements, not row-major: they overlap
    somewhere and leave a gap elsewhere."""
    while True:
        shape = tuple(rng.randint(2, 3) for _ in range(rng.randint(3, 4)))
        stride = tuple(sorted((rng.randint(1, 9) for _ in shape[1:]), reverse=True)) + (1,)
        span = 1 + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))
        if span == math.prod(shape) and stride != contiguous_strides(shape):
            return Layout.strided(shape, stride)


IS_CONTIGUOUS = Rule(
    title="your contiguity rule",
    signature="def is_contiguous(shape, stride)",
    cases=contiguity_cases,
    params=("shape", "stride"),
    success=lambda n: (
        f"right on all {n} random layouts of 0 to 5 dims: row-major order with no gaps, "
        "where size-1 dims (never stepped along) and empty tensors (nothing to read) never "
        "disagree"
    ),
    form=_not_a_bool,
    causes=(_both_ways,),
)

register(
    Exercise(
        "04.is_contiguous",
        "Write is_contiguous(shape, stride) with torch's rules (size-1 dims, empty tensors), "
        "with arithmetic on the tuples (asking torch does not count).",
        lambda fn: judge(fn, IS_CONTIGUOUS),
        "Walk the dims from last to first: the stride must equal the product of the sizes "
        "after it. Decide what a size-1 dim, and a tensor with no elements, should do.",
        minutes=12,
    )
)
