"""Named layouts: right values, the promised strides, one test per name, clear refusals."""

from __future__ import annotations

import pytest
import torch

from course.errors import CourseError
from course.layout.named import LAYOUTS, OFFSET, has_layout, is_dense, laid_out, require_layout

VALUES_2D = torch.arange(12.0).reshape(3, 4)
SHAPES = {"permuted": (2, 3, 4), "channels-last": (2, 3, 4, 5)}


def _values(layout: str) -> torch.Tensor:
    shape = SHAPES.get(layout, (3, 4))
    values = torch.arange(float(torch.Size(shape).numel())).reshape(shape)
    return values[:1].expand(3, 4).clone() if layout == "expanded" else values


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_values_survive_and_each_made_layout_has_its_own_name_only(layout):
    out = laid_out(_values(layout), layout)
    assert torch.equal(out, _values(layout))
    assert {name for name in LAYOUTS if has_layout(out, name)} == {layout}


def test_strides_are_the_documented_ones():
    assert laid_out(VALUES_2D, "transposed").stride() == (1, 3)
    assert laid_out(VALUES_2D, "step-sliced").stride() == (8, 2)
    assert laid_out(VALUES_2D, "storage-offset").storage_offset() == OFFSET
    assert laid_out(VALUES_2D, "expanded").stride() == (0, 1)
    assert laid_out(torch.zeros(2, 3, 4), "permuted").stride() == (3, 1, 6)


def test_tensors_from_elsewhere_can_have_two_layouts():
    view = torch.zeros(10, 4)[1:].T  # transposed, and starts inside its storage
    assert has_layout(view, "transposed") and has_layout(view, "storage-offset")
    heads = torch.zeros(2, 5, 3, 4).permute(0, 2, 1, 3)  # (batch, heads, seq, dim) attention
    assert has_layout(heads, "permuted") and not has_layout(heads, "channels-last")


def test_torchs_channels_last_spelling_is_accepted_where_a_name_is_typed():
    images = torch.zeros(2, 3, 4, 5)
    assert require_layout("channels_last") == "channels-last"
    assert laid_out(images, "channels_last").is_contiguous(memory_format=torch.channels_last)
    assert has_layout(laid_out(images, "channels-last"), "channels_last")
    with pytest.raises(CourseError, match="layout='channels_last' is not allowed"):
        require_layout("channels_last", ("transposed",))


def test_dense_means_no_gaps_whatever_the_order():
    assert is_dense(torch.zeros(3, 4).T) and is_dense(torch.zeros(0, 3)[:, ::2])
    assert not is_dense(torch.zeros(3, 4)[:, ::2])


def test_bad_input_names_what_is_allowed():
    with pytest.raises(CourseError, match="layout='sideways'.*'transposed'"):
        laid_out(VALUES_2D, "sideways")
    with pytest.raises(CourseError, match="layout='sideways'.*'transposed'"):
        has_layout(VALUES_2D, "sideways")
    with pytest.raises(CourseError, match="needs a 3-D tensor"):
        laid_out(VALUES_2D, "permuted")
    with pytest.raises(CourseError, match="must be a tensor"):
        laid_out([1, 2], "contiguous")
    with pytest.raises(CourseError, match="0-D"):
        laid_out(torch.tensor(1.0), "transposed")
