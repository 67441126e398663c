"""The layout calculator against the installed torch, for random shapes and op chains."""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course.errors import CourseError
from course.layout.calculator import (
    T_DEPRECATED,
    T_DEPRECATED_0D,
    Layout,
    apply,
    apply_torch,
    explain_contiguity,
    view_verdict,
)
from course.layout.opchain import Op, chain_text, parse_chain
from tests.strategies import chains, nonempty_shapes

TORCH_ERRORS = (RuntimeError, IndexError, ValueError)


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@pytest.mark.filterwarnings("ignore:.*deprecated:UserWarning")  # .T on other ranks than 2
@settings(max_examples=400, deadline=None)
@given(chains())
def test_calculator_matches_torch_step_by_step(case):
    shape, ops = case
    tensor, layout = torch.empty(shape), Layout.contiguous(shape)
    for op in ops:
        try:
            result = apply_torch(tensor, op)
        except TORCH_ERRORS:
            with pytest.raises(CourseError):
                apply(layout, op)
            return
        predicted = apply(layout, op)
        assert predicted.shape == tuple(result.shape), op
        assert predicted.stride == result.stride(), op
        assert predicted.offset == result.storage_offset(), op
        assert predicted.is_contiguous() == result.is_contiguous(), op
        assert predicted.storage_size == Layout.of(result).storage_size, op
        if tensor.numel() and result.numel():
            copied = predicted.storage_id != layout.storage_id
            assert copied == (not _same_storage(tensor, result)), op
        tensor, layout = result, predicted


@settings(max_examples=200, deadline=None)
@given(chains())
def test_chain_text_round_trips(case):
    _, ops = case
    assert parse_chain(chain_text(ops)) == ops


def test_the_encoder_layout_from_the_story():
    decoder = Layout.contiguous((384, 1536))
    encoder = apply(apply(decoder, Op("T")), Op("clone"))
    assert encoder.stride == (1, 1536) and not encoder.is_contiguous()
    assert apply(encoder, Op("contiguous")).stride == (384, 1)
    assert apply(encoder, Op("clone", ("contiguous_format",))).stride == (384, 1)


def test_contiguous_of_a_contiguous_tensor_is_no_copy():
    rows = apply(Layout.contiguous((4, 6)), Op("index", (slice(1, 3),)))
    assert apply(rows, Op("contiguous")) is rows


def test_expand_gives_stride_zero_and_a_reason():
    layout = apply(Layout.contiguous((3, 1)), Op("expand", ((3, 4),)))
    assert layout.stride == (1, 0)
    assert "stride 0" in explain_contiguity(layout)


def test_view_verdict_names_the_dims_that_are_not_neighbours():
    transposed = apply(Layout.contiguous((4, 6)), Op("T"))
    view, reason = view_verdict(transposed, (24,))
    assert view is None
    assert "dims 0 and 1" in reason and "reshape(24,)" in reason
    view, reason = view_verdict(transposed, (6, 2, 2))
    assert view is not None and view.stride == (1, 12, 6) and "no copy" in reason


@pytest.mark.parametrize(
    "op, message",
    [
        (Op("index", (slice(None, None, -1),)), "greater than zero"),
        (Op("view", ((5, 5),)), "holds 25 elements"),
        (Op("expand", ((4, 4),)), "only size-1 dims"),
        (Op("permute", ((0, 0),)), "exactly once"),
        (Op("as_strided", ((3, 3), (6, 1), 20)), "has only 24 elements"),
        (Op("narrow", (1, 4, 3)), "exceeds"),
        (Op("index", (0, 0, 0)), "too many indices"),
    ],
)
def test_invalid_ops_raise_course_errors(op, message):
    """Each refusal names what was wrong (the torch-agreement test checks *that* they refuse)."""
    with pytest.raises(CourseError, match=message):
        apply(Layout.contiguous((4, 6)), op)


def test_storage_index_is_offset_plus_index_times_stride():
    layout = apply(Layout.contiguous((4, 6)), parse_chain("T; [1:, ::2]")[0])
    layout = apply(layout, parse_chain("[1:, ::2]")[0])
    assert (
        layout.storage_index((1, 1)) == layout.offset + 1 * layout.stride[0] + 1 * layout.stride[1]
    )
    tensor = torch.arange(24).view(4, 6).T[1:, ::2]
    assert tensor.flatten()[tensor.shape[1] + 1] == layout.storage_index((1, 1))
    with pytest.raises(CourseError, match="out of range"):
        layout.storage_index((0, 9))


@settings(max_examples=200, deadline=None)
@given(nonempty_shapes, st.data())
def test_clone_of_a_gappy_view_keeps_its_dim_order(shape, data):
    order = data.draw(st.permutations(range(len(shape))))
    steps = tuple(slice(None, None, data.draw(st.integers(1, 3))) for _ in shape)
    ops = [Op("permute", (tuple(order),)), Op("index", steps)]
    if data.draw(st.booleans()):
        ops.append(Op("unsqueeze", (0,)))
        ops.append(Op("expand", ((2,) + (-1,) * len(shape),)))
    tensor, layout = torch.empty(shape), Layout.contiguous(shape)
    for op in ops + [Op("clone")]:
        tensor, layout = apply_torch(tensor, op), apply(layout, op)
    assert layout.stride == tensor.stride()


def test_t_names_the_rank_it_needs():
    with pytest.raises(CourseError, match="at most 2 dims"):
        apply(Layout.contiguous((2, 3, 4)), Op("t"))


@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4)])
def test_dot_T_on_other_ranks_follows_torch_with_its_warning(shape):
    """torch still answers .T on other ranks than 2 (reversed dims) and warns that it will
    refuse them (once per process); the calculator gives the same view and the same warning,
    every time."""
    with pytest.warns(UserWarning) as predicted:
        layout = apply(Layout.contiguous(shape), Op("T"))
    with warnings.catch_warnings(record=True) as real:
        warnings.simplefilter("always")
        tensor = torch.empty(shape).T
    assert (layout.shape, layout.stride) == (tuple(tensor.shape), tensor.stride())
    expected = T_DEPRECATED_0D if shape == () else T_DEPRECATED
    assert [str(w.message) for w in predicted] == [expected]
    assert all(str(w.message).startswith(expected) for w in real)


@pytest.mark.parametrize(
    "shape, args",
    [
        ((7,), (0, 3, 2)),
        ((4, 6), (1, 2, 2)),
        ((4, 6), (-2, 4, 1)),
        ((), (0, 1, 1)),
        ((3,), (0, 0, 5)),
    ],
)
def test_unfold_is_a_window_view(shape, args):
    layout = apply(Layout.contiguous(shape), Op("unfold", args))
    tensor = torch.empty(shape).unfold(*args)
    assert (layout.shape, layout.stride, layout.offset) == (
        tuple(tensor.shape),
        tensor.stride(),
        tensor.storage_offset(),
    )
    assert parse_chain(f"unfold{args}") == [Op("unfold", args)]


@pytest.mark.parametrize(
    "args, message", [((0, 9, 1), "maximum size for dim 0 is 7"), ((0, 2, 0), "step is 0")]
)
def test_unfold_refuses_what_torch_refuses(args, message):
    with pytest.raises(RuntimeError):
        torch.empty(7).unfold(*args)
    with pytest.raises(CourseError, match=message):
        apply(Layout.contiguous((7,)), Op("unfold", args))


def test_bad_shapes_and_unknown_ops_are_course_errors():
    """Issue 19: a string shape, a -1 size and an op the calculator lacks."""
    with pytest.raises(CourseError, match="shape='3,4' is not allowed"):
        Layout.contiguous("3,4")
    with pytest.raises(CourseError, match=r"shape=\(-1, 3\) is not allowed: .* each >= 0"):
        Layout.contiguous((-1, 3))
    with pytest.raises(CourseError, match="no rule for 'mT'; it knows: T, t, transpose"):
        apply(Layout.contiguous((2, 3)), Op("mT"))
    with pytest.raises(CourseError, match="no rule for 'T'"):
        apply(Layout.contiguous((2, 3)), "T")


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Layout.strided((2, 3), (1,)), r"stride=\(1,\) is not allowed: give a tuple of 2"),
        (lambda: Layout.strided((2, 3), (-3, 1)), "strides are whole numbers >= 0"),
        (lambda: Layout.strided((2, 3), (3, 1), -1), "offset=-1 is not allowed"),
        (lambda: Layout.strided((2, 3), (3, 1.5)), "whole numbers"),
        (lambda: Layout.strided("2,3", (3, 1)), "shape='2,3'"),
        (lambda: Layout((2, 3), (3, -1), 0, 6), "strides are >= 0"),
        (lambda: Layout((2, 3), (3, 1), -2, 6), "offset=-2"),
        (lambda: Layout((2, 3), (3, 1), 0, 5), "reaches storage slot 5, but the storage holds"),
        (lambda: Layout((2, 3), (1,), 0, 6), "has 1 entries but shape"),
    ],
)
def test_layouts_torch_could_not_make_are_refused(make, match):
    """Issue 37: a stride tuple of the wrong length failed inside zip; negative strides and
    offsets (which torch refuses) were accepted."""
    with pytest.raises(CourseError, match=match):
        make()
