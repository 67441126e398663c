"""View or copy: the strides a view would get (or None) and the strides of a fresh tensor."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course.layout.calculator import Layout
from course.layout.view_or_copy import contiguous_strides, view_strides
from tests.strategies import nonempty_shapes, same_numel_shapes


@settings(max_examples=200, deadline=None)
@given(nonempty_shapes, st.data())
def test_view_of_a_transposed_tensor_agrees_with_torch(shape, data):
    tensor = torch.empty(shape).transpose(0, -1)
    new_shape = data.draw(same_numel_shapes(tensor.numel()))
    layout = Layout.of(tensor)
    try:
        expected = tensor.view(new_shape).stride()
    except RuntimeError:
        expected = None
    resolved = tensor.reshape(new_shape).shape
    assert view_strides(layout.shape, layout.stride, tuple(resolved)) == expected


def test_contiguous_strides_treat_size_zero_as_one():
    assert contiguous_strides((2, 0, 3)) == torch.empty(2, 0, 3).stride()
