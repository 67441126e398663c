"""04.is_contiguous: the reference, and wrong contiguity rules keyed by their flaw."""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch

from course.layout.calculator import Layout
from tests.corpus import Corpus


def is_contiguous_reference():
    def is_contiguous(shape, stride):
        if 0 in shape:
            return True  # no elements: nothing can be read out of order
        expected = 1
        for size, step in zip(reversed(shape), reversed(stride), strict=True):
            if size != 1:  # a size-1 dim is never stepped along
                if step != expected:
                    return False
                expected *= size
        return True

    return is_contiguous


def _row_major_strides_only():
    def is_contiguous(shape, stride):
        expected, running = [], 1
        for size in reversed(shape):
            expected.insert(0, running)
            running *= size
        return tuple(stride) == tuple(expected)

    return is_contiguous


def _size_one_but_not_empty():
    def is_contiguous(shape, stride):
        expected = 1
        for size, step in zip(reversed(shape), reversed(stride), strict=True):
            if size != 1:
                if step != expected:
                    return False
                expected *= size
        return True

    return is_contiguous


def _innermost_stride_only():
    def is_contiguous(shape, stride):
        return not stride or stride[-1] == 1

    return is_contiguous


def _strides_decreasing():
    def is_contiguous(shape, stride):
        return list(stride) == sorted(stride, reverse=True)

    return is_contiguous


def _no_gaps():
    def is_contiguous(shape, stride):  # "contiguous = no gaps in memory"
        span = 1 + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))
        return math.prod(shape) == 0 or span == math.prod(shape)

    return is_contiguous


def _three_named_dims():
    def is_contiguous(shape, stride):
        if 0 in shape:
            return True
        n0, n1, n2 = (1,) * (3 - len(shape)) + tuple(shape)
        s0, s1, s2 = (0,) * (3 - len(stride)) + tuple(stride)
        return (n2 == 1 or s2 == 1) and (n1 == 1 or s1 == n2) and (n0 == 1 or s0 == n1 * n2)

    return is_contiguous


def _asks_torch():
    def is_contiguous(shape, stride):
        return torch.empty_strided(shape, stride).is_contiguous()

    return is_contiguous


def _asks_numpy():
    def is_contiguous(shape, stride):
        array = np.lib.stride_tricks.as_strided(np.zeros(1), shape, [8 * s for s in stride])
        return bool(array.flags.c_contiguous)

    return is_contiguous


def _course_calculator():
    def is_contiguous(shape, stride):
        return Layout.strided(shape, stride).is_contiguous()

    return is_contiguous


def _expanded_dims_allowed():
    def is_contiguous(shape, stride):  # "a stride-0 dim takes no room, so it breaks nothing"
        if 0 in shape:
            return True
        expected = 1
        for size, step in zip(reversed(shape), reversed(stride), strict=True):
            if size != 1 and step != 0:
                if step != expected:
                    return False
                expected *= size
        return True

    return is_contiguous


def _no_dims_not_contiguous():
    def is_contiguous(shape, stride):
        if not shape:
            return False  # "no dims, no order"
        return is_contiguous_reference()(shape, stride)

    return is_contiguous


def _dense_and_decreasing():
    def is_contiguous(shape, stride):  # no gaps, and the strides shrink towards the last dim
        numel = math.prod(shape)
        span = 1 + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))
        return numel == 0 or (span == numel and list(stride) == sorted(stride, reverse=True))

    return is_contiguous


def _decreasing_to_one():
    def is_contiguous(shape, stride):
        return not stride or (stride[-1] == 1 and list(stride) == sorted(stride, reverse=True))

    return is_contiguous


def _empty_dims_skipped_like_size_one():
    def is_contiguous(shape, stride):  # "dims of size 0 or 1 are never stepped along"
        expected = 1
        for size, step in zip(reversed(shape), reversed(stride), strict=True):
            if size > 1:
                if step != expected:
                    return False
                expected *= size
        return True

    return is_contiguous


def _fills_its_span_decreasing_to_one():
    def is_contiguous(shape, stride):  # "no gaps, and the strides shrink to 1"
        if 0 in shape:
            return True
        stepped = [(n, s) for n, s in zip(shape, stride, strict=True) if n != 1]
        span = 1 + sum((n - 1) * s for n, s in stepped)
        shrinking = all(a[1] >= b[1] for a, b in itertools.pairwise(stepped))
        return not stepped or (span == math.prod(shape) and shrinking and stepped[-1][1] == 1)

    return is_contiguous


def _empty_by_product(shape, stride):
    if math.prod(shape) == 0:
        return True
    expected = 1
    for size, step in reversed(list(zip(shape, stride, strict=True))):
        if size > 1 and step != expected:
            return False
        expected *= size
    return True


CORPORA = (
    Corpus(
        "04.is_contiguous",
        is_contiguous_reference,
        wrong={
            "strides equal to the row-major ones": (
                _row_major_strides_only,
                "never stepped along",
            ),
            "size-1 dims handled, empty tensors not": (_size_one_but_not_empty, "no elements"),
            "the innermost stride only": (_innermost_stride_only, "an expanded dim repeats"),
            "strides in decreasing order": (
                _strides_decreasing,
                "every index along it reads the same slot",
            ),
            "no gaps taken for contiguous": (_no_gaps, "not in row-major order"),
            "three dims unpacked by name": (_three_named_dims, "up to 3 dims, but not with 4"),
            "torch.empty_strided": (
                _asks_torch,
                "asked torch (torch.empty_strided, Tensor.is_contiguous)",
            ),
            "numpy's flags": (_asks_numpy, "asked numpy"),
            "Layout.is_contiguous": (_course_calculator, "course's own course.layout.calculator"),
            "stride-0 dims skipped like size-1 dims": (
                _expanded_dims_allowed,
                "dim 0 has stride 0",
            ),
            "no dims: not contiguous": (
                _no_dims_not_contiguous,
                "a 0-dim tensor holds one element",
            ),
            "no gaps and decreasing strides": (_dense_and_decreasing, "never stepped along"),
            "last stride 1 and decreasing strides": (_decreasing_to_one, "leave gaps"),
            "size-0 dims skipped like size-1 dims": (
                _empty_dims_skipped_like_size_one,
                "no elements",
            ),
            "no gaps, strides shrinking to 1": (
                _fills_its_span_decreasing_to_one,
                "its elements overlap",
            ),
        },
        right={
            "emptiness asked with math.prod": lambda: _empty_by_product,
        },
    ),
)
