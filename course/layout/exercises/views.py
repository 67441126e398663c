"""04.view_rules: the layout (shape, stride, offset) after .T, a step slice and a permute.

Each rule is checked against torch on a hundred or more random layouts (the slice on 1 to 5
dims, the permute on 2 to 5), every parameter of the prompt varied: shape, stride, offset, the
sliced dim, start, stop, step and the order of the dims. A wrong rule is told its classic cause:
strides that stay when the dims swap, an offset dropped or never moved, a count that rounds
down, a stride that ignores the step, the inverse permutation, three dims named one by one, a
parameter ignored (or copied from the notebook's example), torch or the course's calculator
asked instead.
"""

from __future__ import annotations

import torch

from course.exercises import Exercise, Verdict, failed, passed, register
from course.layout import oracle
from course.layout.calculator import Layout, apply
from course.layout.exercises.common import Rule, judge, smallest
from course.layout.opchain import Op
from course.layout.oracle import Mismatch

SHAPE_WHY = "The shape is part of the layout: the view's sizes follow from the input's."
STRIDE_WHY = "The strides are part of the layout: the view's strides follow from the input's."
OFFSET_WHY = (
    "A view starts counting from its input's storage offset (x[1:] already starts inside its "
    "storage): the input's own offset carries over."
)


def _view_rules_reference():
    def after_T(shape, stride, offset):
        return shape[::-1], stride[::-1], offset

    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[dim] = (stop - start + step - 1) // step  # start, start + step, ... < stop
        new_stride[dim] = stride[dim] * step
        return tuple(new_shape), tuple(new_stride), offset + start * stride[dim]

    def permute(shape, stride, offset, dims):
        return tuple(shape[d] for d in dims), tuple(stride[d] for d in dims), offset

    return {"T": after_T, "step_slice": step_slice, "permute": permute}


REFERENCE = _view_rules_reference()


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


def _slice_rounds_down(m: Mismatch) -> str | None:
    shape, stride, offset, dim, start, stop, step = m.case.args
    if m.yours[0][dim] == (stop - start) // step != m.case.expected[0][dim]:
        return (
            "it counts (stop - start) // step elements along the sliced dim, which rounds down: "
            f"[{start}:{stop}:{step}] keeps {start}, {start} + {step}, ... as long as they stay "
            f"below {stop}, so a last, partial step still keeps an element"
        )
    return None


def _slice_counts_every_element(m: Mismatch) -> str | None:
    shape, stride, offset, dim, start, stop, step = m.case.args
    if step > 1 and m.yours[0][dim] == stop - start != m.case.expected[0][dim]:
        return (
            f"it counts every element from {start} to {stop}, but a step of {step} keeps one "
            f"element in {step}"
        )
    return None


def _slice_one_too_many(m: Mismatch) -> str | None:
    shape, stride, offset, dim, start, stop, step = m.case.args
    if m.yours[0][dim] == (stop - start) // step + 1 != m.case.expected[0][dim]:
        return (
            f"it counts (stop - start) // step + 1 elements, one too many when the step divides "
            f"stop - start: [{start}:{stop}:{step}] keeps {start}, {start} + {step}, ... only "
            f"while they stay below {stop} (an empty slice [k:k] keeps none)"
        )
    return None


def _slice_steps_every_dim(m: Mismatch) -> str | None:
    shape, stride, offset, dim, start, stop, step = m.case.args
    stepped = tuple(s * step for s in stride)
    if step > 1 and len(stride) > 1 and m.yours[1] == stepped != m.case.expected[1]:
        return (
            f"it multiplies every dim's stride by the step, but only dim {dim} is sliced: the "
            "other dims keep their sizes and strides"
        )
    return None


def _slice_stride_is_step(m: Mismatch) -> str | None:
    shape, stride, offset, dim, start, stop, step = m.case.args
    if m.yours[1][dim] == step != m.case.expected[1][dim]:
        return (
            f"the sliced dim's stride becomes the step, {step}. But the step counts elements "
            f"of dim {dim}, and one element of that dim is stride[{dim}] = {stride[dim]} slots "
            "from the next: a stride counts slots"
        )
    return None


def _slice_stride_ignores_step(m: Mismatch) -> str | None:
    shape, stride, offset, dim, start, stop, step = m.case.args
    if step > 1 and m.yours[1][dim] == stride[dim] != m.case.expected[1][dim]:
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


def _causes(*tests):
    return tuple(lambda misses, test=test: smallest(misses, test) for test in tests)


def _bigger(values: tuple) -> list[tuple]:
    return [tuple(v + 1 for v in values)]


def _rotated(dims: tuple) -> list[tuple]:
    return [dims[k:] + dims[:k] for k in range(1, len(dims))]


RULES = {
    "T": Rule(
        title="your 'T' rule",
        signature="def after_T(shape, stride, offset): return shape, stride, offset",
        cases=oracle.transpose_cases,
        reference=REFERENCE["T"],
        params=("shape", "stride", "offset"),
        form=_three_values,
        probes={
            "shape": lambda a: _bigger(a[0]),
            "stride": lambda a: _bigger(a[1]),
            "offset": lambda a: [a[2] + 3],
        },
        why={"shape": SHAPE_WHY, "stride": STRIDE_WHY, "offset": OFFSET_WHY},
        causes=_causes(_t_keeps_strides, _t_keeps_shape),
    ),
    "step_slice": Rule(
        title="your 'step_slice' rule",
        signature="def step_slice(shape, stride, offset, dim, start, stop, step): "
        "return shape, stride, offset",
        cases=oracle.step_slice_cases,
        reference=REFERENCE["step_slice"],
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
        causes=_causes(
            _slice_rounds_down,
            _slice_one_too_many,
            _slice_counts_every_element,
            _slice_steps_every_dim,
            _slice_stride_is_step,
            _slice_stride_ignores_step,
            _slice_offset,
        ),
    ),
    "permute": Rule(
        title="your 'permute' rule",
        signature="def permute(shape, stride, offset, dims): return shape, stride, offset",
        cases=oracle.permute_cases,
        reference=REFERENCE["permute"],
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
        causes=_causes(_permute_inverse, _permute_keeps_strides),
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
    total = 0
    for name, rule in RULES.items():
        verdict, count = judge(rules[name], rule)
        if verdict is not None:
            return verdict
        total += count
    return passed(
        f"all three rules agree with torch on {total} random layouts: views only rearrange "
        "shape, stride and offset; the storage never moves"
    )


def _with(**changed):
    """The reference rules with one of them replaced by a wrong one."""
    return {**_view_rules_reference(), **changed}


def _t_keeping_strides():
    def after_T(shape, stride, offset):
        return shape[::-1], stride, offset

    return _with(T=after_T)


def _t_from_offset_zero():
    def after_T(shape, stride, offset):
        return shape[::-1], stride[::-1], 0

    return _with(T=after_T)


def _t_of_the_example():
    def after_T(shape, stride, offset):
        return (6, 4), (1, 6), 0  # x = torch.arange(24).view(4, 6); x.T

    return _with(T=after_T)


def _slice_rounding_down():
    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[dim] = (stop - start) // step
        new_stride[dim] = stride[dim] * step
        return tuple(new_shape), tuple(new_stride), offset + start * stride[dim]

    return _with(step_slice=step_slice)


def _slice_keeping_the_offset():
    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[dim] = (stop - start + step - 1) // step
        new_stride[dim] = stride[dim] * step
        return tuple(new_shape), tuple(new_stride), offset

    return _with(step_slice=step_slice)


def _slice_keeping_the_stride():
    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape = list(shape)
        new_shape[dim] = (stop - start + step - 1) // step
        return tuple(new_shape), tuple(stride), offset + start * stride[dim]

    return _with(step_slice=step_slice)


def _slice_of_dim_zero():
    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[0] = (stop - start + step - 1) // step  # x[start:stop:step] slices dim 0
        new_stride[0] = stride[0] * step
        return tuple(new_shape), tuple(new_stride), offset + start * stride[0]

    return _with(step_slice=step_slice)


def _slice_one_more():
    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[dim] = (stop - start) // step + 1  # "the first, then one per whole step"
        new_stride[dim] = stride[dim] * step
        return tuple(new_shape), tuple(new_stride), offset + start * stride[dim]

    return _with(step_slice=step_slice)


def _slice_stepping_every_dim():
    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape = list(shape)
        new_shape[dim] = (stop - start + step - 1) // step
        new_stride = tuple(s * step for s in stride)
        return tuple(new_shape), new_stride, offset + start * stride[dim]

    return _with(step_slice=step_slice)


def _slice_offset_times_step():
    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[dim] = (stop - start + step - 1) // step
        new_stride[dim] = stride[dim] * step
        return tuple(new_shape), tuple(new_stride), offset + start * new_stride[dim]

    return _with(step_slice=step_slice)


def _slice_to_the_end():
    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[dim] = (shape[dim] - start + step - 1) // step  # x[start::step]
        new_stride[dim] = stride[dim] * step
        return tuple(new_shape), tuple(new_stride), offset + start * stride[dim]

    return _with(step_slice=step_slice)


def _slice_stride_of_the_step():
    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[dim] = (stop - start + step - 1) // step
        new_stride[dim] = step  # "x[::2] has stride 2"
        return tuple(new_shape), tuple(new_stride), offset + start * stride[dim]

    return _with(step_slice=step_slice)


def _slice_offset_by_start_times_step():
    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[dim] = (stop - start + step - 1) // step
        new_stride[dim] = stride[dim] * step
        return tuple(new_shape), tuple(new_stride), offset + start * step

    return _with(step_slice=step_slice)


def _permute_into_row_major():
    def permute(shape, stride, offset, dims):
        new_shape = tuple(shape[d] for d in dims)
        new_stride, running = [], 1
        for size in reversed(new_shape):
            new_stride.insert(0, running)
            running *= size
        return new_shape, tuple(new_stride), offset

    return _with(permute=permute)


def _inverse_permute():
    def permute(shape, stride, offset, dims):
        order = [dims.index(d) for d in range(len(dims))]
        return tuple(shape[d] for d in order), tuple(stride[d] for d in order), offset

    return _with(permute=permute)


def _permute_of_three_named_dims():
    def permute(shape, stride, offset, dims):
        if len(dims) == 2:
            a, b = dims
            return (shape[a], shape[b]), (stride[a], stride[b]), offset
        a, b, c = dims
        return (shape[a], shape[b], shape[c]), (stride[a], stride[b], stride[c]), offset

    return _with(permute=permute)


def _t_asking_torch():
    def after_T(shape, stride, offset):
        view = torch.empty(10_000).as_strided(shape, stride, offset).T
        return tuple(view.shape), view.stride(), view.storage_offset()

    return _with(T=after_T)


def _t_from_the_course_calculator():
    def after_T(shape, stride, offset):
        layout = apply(Layout.strided(shape, stride, offset), Op("T"))
        return layout.shape, layout.stride, layout.offset

    return _with(T=after_T)


register(
    Exercise(
        "04.view_rules",
        "Write the layout (shape, stride, offset) after .T, after a step slice "
        "[start:stop:step] on one dim, and after permute(dims), with arithmetic on the tuples "
        "(asking torch does not count).",
        check_view_rules,
        "None of them moves data. .T reverses the dims; a step slice starts `start` elements "
        "into the dim and jumps `step` elements at a time; permute reorders the dims.",
        _view_rules_reference,
        (
            _t_keeping_strides,
            _t_from_offset_zero,
            _t_of_the_example,
            _slice_rounding_down,
            _slice_keeping_the_offset,
            _slice_keeping_the_stride,
            _slice_of_dim_zero,
            _inverse_permute,
            _permute_of_three_named_dims,
            _t_asking_torch,
            _t_from_the_course_calculator,
            _slice_one_more,
            _slice_stepping_every_dim,
            _slice_offset_times_step,
            _slice_to_the_end,
            _permute_into_row_major,
            _slice_stride_of_the_step,
            _slice_offset_by_start_times_step,
        ),
    )
)
