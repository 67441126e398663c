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
