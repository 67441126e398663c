"""The hidden outputs are stored as their names say."""

from __future__ import annotations

import pytest
import torch

from course.kernels.exercises.placeholder.outputs import HIDDEN_SHAPES, described, hidden_output
from course.layout.named import is_dense


@pytest.mark.parametrize("layout", sorted(HIDDEN_SHAPES))
def test_each_hidden_output_has_its_shape_and_seeded_values(layout):
    output = hidden_output(layout, seed=4)
    assert tuple(output.shape) == HIDDEN_SHAPES[layout]
    assert torch.equal(output, hidden_output(layout, seed=4))
    assert output.is_contiguous() == layout.startswith(("contiguous", "storage-offset"))
    assert layout.split()[0] in described(layout, output)


def test_the_odd_layouts_are_odd_in_the_way_they_claim():
    assert hidden_output("row-sliced").stride(-1) == 1
    assert not is_dense(hidden_output("row-sliced"))
    assert hidden_output("transposed with a storage offset").storage_offset() > 0
    assert hidden_output("4-d, two dims swapped").dim() == 4


@pytest.mark.parametrize("layout", sorted(HIDDEN_SHAPES))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_low_precision_output_keeps_its_layout(layout, dtype):
    # .to(dtype) would not: it keeps strides only of a tensor without gaps
    output, float32 = hidden_output(layout, seed=2, dtype=dtype), hidden_output(layout, seed=2)
    assert output.dtype == dtype and output.stride() == float32.stride()
    assert output.storage_offset() == float32.storage_offset()
    assert torch.equal(output, float32.to(dtype)) and str(dtype) in described(layout, output)
