"""04.view_rules: the reference rules, and answers with one wrong rule, keyed by its flaw."""

from __future__ import annotations

import torch

from course.layout.calculator import Layout, apply
from course.layout.opchain import Op
from tests.corpus import Corpus


def view_rules_reference():
    def after_T(shape, stride, offset):
        return shape[::-1], stride[::-1], offset

    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[dim] = (stop - start + step - 1) // step  # start, start + step, ... below stop
        new_stride[dim] = stride[dim] * step
        return tuple(new_shape), tuple(new_stride), offset + start * stride[dim]

    def permute(shape, stride, offset, dims):
        return tuple(shape[d] for d in dims), tuple(stride[d] for d in dims), offset

    return {"T": after_T, "step_slice": step_slice, "permute": permute}


def _with(**changed):
    """The reference rules with one of them replaced by a wrong one."""
    return lambda: {**view_rules_reference(), **changed}


def _slice(count, stride_of, offset_of):
    """A step_slice from its three parts: the sliced dim's size, its stride, the offset."""

    def step_slice(shape, stride, offset, dim, start, stop, step):
        new_shape, new_stride = list(shape), list(stride)
        new_shape[dim] = count(shape, dim, start, stop, step)
        new_stride[dim] = stride_of(stride, dim, step)
        return tuple(new_shape), tuple(new_stride), offset_of(offset, stride, dim, start, step)

    return step_slice


def _count(shape, dim, start, stop, step):
    return (stop - start + step - 1) // step


def _stride(stride, dim, step):
    return stride[dim] * step


def _offset(offset, stride, dim, start, step):
    return offset + start * stride[dim]


def _slice_of_dim_zero(shape, stride, offset, dim, start, stop, step):
    new_shape, new_stride = list(shape), list(stride)
    new_shape[0] = (stop - start + step - 1) // step  # x[start:stop:step] slices dim 0
    new_stride[0] = stride[0] * step
    return tuple(new_shape), tuple(new_stride), offset + start * stride[0]


def _slice_stepping_every_dim(shape, stride, offset, dim, start, stop, step):
    new_shape = list(shape)
    new_shape[dim] = (stop - start + step - 1) // step
    return tuple(new_shape), tuple(s * step for s in stride), offset + start * stride[dim]


def _permute_into_row_major(shape, stride, offset, dims):
    new_shape = tuple(shape[d] for d in dims)
    new_stride, running = [], 1
    for size in reversed(new_shape):
        new_stride.insert(0, running)
        running *= size
    return new_shape, tuple(new_stride), offset


def _inverse_permute(shape, stride, offset, dims):
    order = [dims.index(d) for d in range(len(dims))]
    return tuple(shape[d] for d in order), tuple(stride[d] for d in order), offset


def _permute_of_three_named_dims(shape, stride, offset, dims):
    if len(dims) == 2:
        a, b = dims
        return (shape[a], shape[b]), (stride[a], stride[b]), offset
    a, b, c = dims
    return (shape[a], shape[b], shape[c]), (stride[a], stride[b], stride[c]), offset


def _t_asking_torch(shape, stride, offset):
    view = torch.empty(10_000).as_strided(shape, stride, offset).T
    return tuple(view.shape), view.stride(), view.storage_offset()


def _t_from_the_course_calculator(shape, stride, offset):
    layout = apply(Layout.strided(shape, stride, offset), Op("T"))
    return layout.shape, layout.stride, layout.offset


def _as_lists():
    """The reference rules answering with lists where it answers with tuples."""
    return {
        name: (lambda f: lambda *a: [list(x) if isinstance(x, tuple) else x for x in f(*a)])(fn)
        for name, fn in view_rules_reference().items()
    }


SLICE = {  # the wrong step slices, each from one wrong part
    "slice: (stop - start) // step": (
        _slice(lambda shape, dim, start, stop, step: (stop - start) // step, _stride, _offset),
        "rounds down",
    ),
    "slice: offset not moved by start": (
        _slice(_count, _stride, lambda offset, stride, dim, start, step: offset),
        "keeps the input's offset",
    ),
    "slice: stride not multiplied by the step": (
        _slice(_count, lambda stride, dim, step: stride[dim], _offset),
        "stride stays",
    ),
    "slice: (stop - start) // step + 1": (
        _slice(lambda shape, dim, start, stop, step: (stop - start) // step + 1, _stride, _offset),
        "one too many",
    ),
    "slice: offset moved by the new stride": (
        _slice(
            _count,
            _stride,
            lambda offset, stride, dim, start, step: offset + start * stride[dim] * step,
        ),
        "start * stride * step",
    ),
    "slice: x[start::step]": (
        _slice(
            lambda shape, dim, start, stop, step: (shape[dim] - start + step - 1) // step,
            _stride,
            _offset,
        ),
        "whatever `stop` is",
    ),
    "slice: the new stride is the step": (
        _slice(_count, lambda stride, dim, step: step, _offset),
        "stride becomes the step",
    ),
    "slice: offset + start * step": (
        _slice(_count, _stride, lambda offset, stride, dim, start, step: offset + start * step),
        "moves the offset by start * step",
    ),
    "slice: offset + start": (
        _slice(_count, _stride, lambda offset, stride, dim, start, step: offset + start),
        "moves the offset by start",
    ),
    "slice: every element from start to stop": (
        _slice(lambda shape, dim, start, stop, step: stop - start, _stride, _offset),
        "counts every element from",
    ),
}

CORPORA = (
    Corpus(
        "04.view_rules",
        view_rules_reference,
        wrong={
            "T: shape swapped, strides not": (
                _with(T=lambda shape, stride, offset: (shape[::-1], stride, offset)),
                "keeps the strides",
            ),
            "T: offset 0": (
                _with(T=lambda shape, stride, offset: (shape[::-1], stride[::-1], 0)),
                "whatever `offset` is",
            ),
            "T: the notebook's x.T written in": (
                _with(T=lambda shape, stride, offset: ((6, 4), (1, 6), 0)),
                "whatever `shape`, `stride` and `offset` are",
            ),
            "T: shape kept": (
                _with(T=lambda shape, stride, offset: (shape, stride[::-1], offset)),
                "it keeps the shape",
            ),
            "T: asks torch": (_with(T=_t_asking_torch), "'T' rule asked torch"),
            "T: the course's calculator": (
                _with(T=_t_from_the_course_calculator),
                "course's own course.layout.calculator",
            ),
            **{flaw: (_with(step_slice=rule), cause) for flaw, (rule, cause) in SLICE.items()},
            "slice: always dim 0": (_with(step_slice=_slice_of_dim_zero), "whatever `dim` is"),
            "slice: every stride times the step": (
                _with(step_slice=_slice_stepping_every_dim),
                "every dim's stride",
            ),
            "permute: the inverse permutation": (
                _with(permute=_inverse_permute),
                "inverse permutation",
            ),
            "permute: dims unpacked by name": (
                _with(permute=_permute_of_three_named_dims),
                "up to 3 dims, but not with 4",
            ),
            "permute: row-major strides for the new shape": (
                _with(permute=_permute_into_row_major),
                "whatever `stride` is",
            ),
            "permute: strides not reordered": (
                _with(
                    permute=lambda shape, stride, offset, dims: (
                        tuple(shape[d] for d in dims),
                        stride,
                        offset,
                    )
                ),
                "reorders the sizes but not the strides",
            ),
            "permute: the wrong form": (
                _with(permute=lambda shape, stride, offset, dims: dims),
                "return three values",
            ),
        },
        right={"lists for tuples": _as_lists},
    ),
)
