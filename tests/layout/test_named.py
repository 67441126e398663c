"""Named layouts: right values, the strides each name promises, and clear refusals."""

from __future__ import annotations

import pytest
import torch

from course.errors import CourseError
from course.layout.named import LAYOUTS, laid_out, layout_name

VALUES_2D = torch.arange(12.0).reshape(3, 4)
SHAPES = {"permuted-3d": (2, 3, 4), "channels-last": (2, 3, 4, 5)}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_values_survive_and_name_round_trips(layout):
    values = torch.arange(float(torch.Size(SHAPES.get(layout, (3, 4))).numel()))
    values = values.reshape(SHAPES.get(layout, (3, 4)))
    if layout == "expanded":
        values = values[:1].expand(3, 4).clone()
    out = laid_out(values, layout)
    assert torch.equal(out, values)
    assert layout_name(out) == layout


def test_strides_are_the_documented_ones():
    assert laid_out(VALUES_2D, "transposed").stride() == (1, 3)
    assert laid_out(VALUES_2D, "step-sliced").stride() == (8, 2)
    assert laid_out(VALUES_2D, "storage-offset").storage_offset() == 7
    assert laid_out(VALUES_2D, "expanded").stride() == (0, 1)


def test_bad_input_names_what_is_allowed():
    with pytest.raises(CourseError, match="layout='sideways'.*'transposed'"):
        laid_out(VALUES_2D, "sideways")
    with pytest.raises(CourseError, match="needs a 3-D tensor"):
        laid_out(VALUES_2D, "permuted-3d")
    with pytest.raises(CourseError, match="must be a tensor"):
        laid_out([1, 2], "contiguous")
    with pytest.raises(CourseError, match="0-D"):
        laid_out(torch.tensor(1.0), "transposed")
