"""04.view_rules: the layout (shape, stride, offset) after .T, a step slice and a permute.

Each rule is checked against torch on a hundred or more random layouts, every parameter of the
prompt varied. A wrong rule is told its classic cause: strides that stay when the dims swap, an
offset dropped or never moved, a count that rounds down, a stride that ignores the step, the
inverse permutation, three dims named one by one, a parameter ignored (or copied from the
notebook's example), torch or the course's calculator asked instead.
"""

from __future__ import annotations

import torch

from course.exercises import Exercise, Verdict, failed, passed, register
from course.layout import oracle
from course.layout.calculator import Layout
from course.layout.exercises.common import Rule, judge, read_smallest
from course.layout.oracle import Mismatch

SHAPE_WHY = "The shape is part of the layout: the view's sizes follow from the input's."
STRIDE_WHY = "The strides are part of the layout: the view's strides follow from the input's."
OFFSET_WHY = (
    "A view starts counting from its input's storage offset (x[1:] already starts inside its "
    "storage): the input's own offset carries over."
)


# The rules' truth on a probe's arguments, which no case holds: torch asked on a tensor of that
# layout (the notebook's arithmetic must not ship in the student release).


def _torch(view: torch.Tensor) -> tuple:
    return tuple(view.shape), view.stride(), view.storage_offset()


def _t(shape, stride, offset):
    return _torch(Layout.strided(shape, stride, offset).tensor().T)


def _step_slice(shape, stride, offset, dim, start, stop, step):
    """A probe's stop may pass the dim's end, where torch would clip it: the dim is made long
    enough first, so the answer is the rule's (the sliced dim's size is not part of it)."""
    long = tuple(max(n, stop) if d == dim else n for d, n in enumerate(shape))
    index = (slice(None),) * dim + (slice(start, stop, step),)
    return _torch(Layout.strided(long, stride, offset).tensor()[index])


def _permute(shape, stride, offset, dims):
    return _torch(Layout.strided(shape, stride, offset).tensor().permute(dims))


def _three_values(m: Mismatch) -> str | None:
    """An answer that is not (shape, stride, offset) with one size and stride per dim."""
    yours, ndim = m.yours, len(m.case.expected[0])
    if (
        isinstance(yours, tuple)
        and len(yours) == 3
        and all(isinstance(part, tuple) and len(part) == ndim for part in yours[:2])
        and isinstance(yours[2], int)
    ):
        return None
    return (
        "return three values, (shape, stride, offset): shape and stride as tuples with one "
        f"int per dim of the view ({ndim} here), the offset an int"
    )


def _t_keeps_strides(m: Mismatch) -> str | None:
    shape, stride, offset = m.case.args
    if m.yours[0] == m.case.expected[0] and m.yours[1] == stride != m.case.expected[1]:
        return (
            "it swaps the sizes but keeps the strides. A transpose swaps the two dims, and each "
            "dim takes its stride along: the strides swap too"
        )
    return None


def _t_keeps_shape(m: Mismatch) -> str | None:
    if m.yours[0] == m.case.args[0] != m.case.expected[0]:
        return "it keeps the shape: x.T of a (rows, cols) tensor is (cols, rows)"
    return None


def _slice_count(m: Mismatch) -> str | None:
    """How many elements a wrong slice keeps along the sliced dim, if a classic miscount."""
    shape, stride, offset, dim, start, stop, step = m.case.args
    yours, kept = m.yours[0][dim], f"[{start}:{stop}:{step}] keeps {start}, {start} + {step}, ..."
    if yours == m.case.expected[0][dim]:
        return None
    if yours == (stop - start) // step:
        return (
            "it counts (stop - start) // step elements along the sliced dim, which rounds down: "
            f"{kept} as long as they stay below {stop}, so a last, partial step still keeps an "
            "element"
        )
    if yours == (stop - start) // step + 1:
        return (
            f"it counts (stop - start) // step + 1 elements, one too many when the step divides "
            f"stop - start: {kept} only while they stay below {stop} (an empty slice [k:k] "
            "keeps none)"
        )
    if step > 1 and yours == stop - start:
        return (
            f"it counts every element from {start} to {stop}, but a step of {step} keeps one "
            f"element in {step}"
        )
    return None


def _slice_stride(m: Mismatch) -> str | None:
    """What a wrong slice did to the strides, if a classic mistake."""
    shape, stride, offset, dim, start, stop, step = m.case.args
    yours, expected = m.yours[1], m.case.expected[1]
    if step > 1 and len(stride) > 1 and yours == tuple(s * step for s in stride) != expected:
        return (
            f"it multiplies every dim's stride by the step, but only dim {dim} is sliced: the "
            "other dims keep their sizes and strides"
        )
    if yours[dim] == step != expected[dim]:
        return (
            f"the sliced dim's stride becomes the step, {step}. But the step counts elements "
            f"of dim {dim}, and one element of that dim is stride[{dim}] = {stride[dim]} slots "
            "from the next: a stride counts slots"
        )
    if step > 1 and yours[dim] == stride[dim] != expected[dim]:
        return (
            f"the sliced dim's stride stays {stride[dim]}, but with a step of {step} one step "
            f"of the view jumps {step} elements of the input"
        )
    return None


def _slice_offset(m: Mismatch) -> str | None:
    shape, stride, offset, dim, start, stop, step = m.case.args
    if m.yours[2] == m.case.expected[2] or start == 0:
        return None
    if m.yours[2] == offset:
        return (
            f"it keeps the input's offset, but the view's first element is element {start} of "
            f"dim {dim}, not element 0: how many storage slots further on does it sit?"
        )
    if step > 1 and m.yours[2] == offset + start * stride[dim] * step:
        return (
            f"it moves the offset by start * stride * step, but the view's first element is "
            f"element {start} of dim {dim}, start * stride[{dim}] slots on: the step only "
            "spaces the elements after it"
        )
    if step > 1 and m.yours[2] == offset + start * step:
        return (
            f"it moves the offset by start * step, but the step only spaces the elements "
            f"after the first, and the first is element {start} of dim {dim}: how many storage "
            "slots on from the input's first element does it sit?"
        )
    if m.yours[2] == offset + start:
        return (
            f"it moves the offset by start = {start} slots, but start counts elements of dim "
            f"{dim}, and one element of that dim is stride[{dim}] = {stride[dim]} slots from "
            "the next"
        )
    return None


def _permute_inverse(m: Mismatch) -> str | None:
    shape, stride, offset, dims = m.case.args
    inverse = [dims.index(d) for d in range(len(dims))]
    if m.yours[:2] == (tuple(shape[d] for d in inverse), tuple(stride[d] for d in inverse)):
        return (
            "it applies the inverse permutation. permute(dims) puts the input's dim dims[i] at "
            "position i of the result, not dim i at position dims[i]"
        )
    return None


def _permute_keeps_strides(m: Mismatch) -> str | None:
    if m.yours[0] == m.case.expected[0] and m.yours[1] == m.case.args[1]:
        return "it reorders the sizes but not the strides: each dim takes its stride along"
    return None


def _bigger(values: tuple) -> list[tuple]:
    return [tuple(v + 1 for v in values)]


def _rotated(dims: tuple) -> list[tuple]:
    return [dims[k:] + dims[:k] for k in range(1, len(dims))]


RULES = {
    "T": Rule(
        title="your 'T' rule",
        signature="def after_T(shape, stride, offset): return shape, stride, offset",
        cases=oracle.transpose_cases,
        truth=_t,
        params=("shape", "stride", "offset"),
        form=_three_values,
        probes={
            "shape": lambda a: _bigger(a[0]),
            "stride": lambda a: _bigger(a[1]),
            "offset": lambda a: [a[2] + 3],
        },
        why={"shape": SHAPE_WHY, "stride": STRIDE_WHY, "offset": OFFSET_WHY},
        causes=read_smallest(_t_keeps_strides, _t_keeps_shape),
    ),
    "step_slice": Rule(
        title="your 'step_slice' rule",
        signature="def step_slice(shape, stride, offset, dim, start, stop, step): "
        "return shape, stride, offset",
        cases=oracle.step_slice_cases,
        truth=_step_slice,
        params=("shape", "stride", "offset", "dim", "start", "stop", "step"),
        form=_three_values,
        probes={
            "shape": lambda a: [tuple(n + (d != a[3]) for d, n in enumerate(a[0]))],
            "stride": lambda a: _bigger(a[1]),
            "offset": lambda a: [a[2] + 3],
            "dim": lambda a: [d for d in range(len(a[0])) if d != a[3]],
            "start": lambda a: [a[4] + 1] if a[4] < a[5] else [],
            "stop": lambda a: [a[5] + a[6], a[5] + 5 * a[6]],
            "step": lambda a: [a[6] + 1, a[6] + 2, a[6] + 5],
        },
        why={
            "shape": SHAPE_WHY,
            "stride": STRIDE_WHY,
            "offset": OFFSET_WHY,
            "dim": "`dim` says which dim is sliced; every other dim keeps its size and stride.",
            "start": "The view starts `start` elements into the sliced dim.",
            "stop": "`stop` bounds how many elements the sliced dim keeps.",
            "step": "A step of k keeps every k-th element.",
        },
        causes=read_smallest(_slice_count, _slice_stride, _slice_offset),
    ),
    "permute": Rule(
        title="your 'permute' rule",
        signature="def permute(shape, stride, offset, dims): return shape, stride, offset",
        cases=oracle.permute_cases,
        truth=_permute,
        params=("shape", "stride", "offset", "dims"),
        form=_three_values,
        probes={
            "shape": lambda a: _bigger(a[0]),
            "stride": lambda a: _bigger(a[1]),
            "offset": lambda a: [a[2] + 3],
            "dims": lambda a: _rotated(a[3]),
        },
        why={
            "shape": SHAPE_WHY,
            "stride": STRIDE_WHY,
            "offset": OFFSET_WHY,
            "dims": "`dims` is the new order of the dims.",
        },
        causes=read_smallest(_permute_inverse, _permute_keeps_strides),
    ),
}


def check_view_rules(rules: object) -> Verdict:
    """04.view_rules: the layout after .T, a step slice and a permute, each against torch."""
    if not isinstance(rules, dict) or set(rules) != set(RULES):
        return failed(
            "answer with a dict of your three functions: "
            "{'T': after_T, 'step_slice': step_slice, 'permute': permute}",
            type(rules).__name__,
            "a dict with keys " + ", ".join(RULES),
        )
    for name, rule in RULES.items():
        verdict = judge(rules[name], rule)
        if not verdict.passed:
            return verdict
    total = sum(len(rule.cases()) for rule in RULES.values())
    return passed(
        f"all three rules agree with torch on {total} random layouts: views only rearrange "
        "shape, stride and offset; the storage never moves"
    )


register(
    Exercise(
        "04.view_rules",
        "Write the layout (shape, stride, offset) after .T, after a step slice "
        "[start:stop:step] on one dim, and after permute(dims), with arithmetic on the tuples "
        "(asking torch does not count).",
        check_view_rules,
        "None of them moves data. .T reverses the dims; a step slice starts `start` elements "
        "into the dim and jumps `step` elements at a time; permute reorders the dims.",
        minutes=15,
    )
)
