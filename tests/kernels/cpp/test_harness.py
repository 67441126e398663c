"""The compiled addcmul_ kernels against torch, for random shapes and layouts.

Everything marked `compile` builds the extension (once per session, ~10-60 s the first time,
then cached); CI has g++ and runs these. The naive kernel must be right on contiguous outputs
and wrong on transposed ones, exactly as `naive_model` (its memory-order retelling) predicts.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course.errors import CourseError
from course.kernels.cpp import (
    KERNEL_NAMES,
    apply,
    correctness_rows,
    load,
    naive_model,
    random_output,
    scramble_inputs,
    sources,
)
from course.kernels.cpp.harness import cpp_source, dispatcher_entry
from course.layout.named import laid_out
from tests.strategies import nonempty_shapes

layouts = st.sampled_from(["contiguous", "transposed", "step-sliced", "storage-offset"])


@pytest.fixture(scope="module")
def compiled():
    load()


def _case(shape, layout, seed, input_layout="contiguous"):
    gen = torch.Generator().manual_seed(seed)
    out = random_output(shape, layout, gen)
    return out, random_output(shape, input_layout, gen), random_output(shape, input_layout, gen)


# ---- without a compiler ----------------------------------------------------------------


def test_naive_model_is_right_on_contiguous_and_scrambles_transposed():
    out, t1, t2 = _case((4, 5), "contiguous", 0)
    torch.testing.assert_close(naive_model(out, t1, t2, 0.5), torch.addcmul(out, t1, t2, value=0.5))
    out, t1, t2 = scramble_inputs(2, 3)
    assert naive_model(out, t1, t2).tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    assert torch.addcmul(out, t1, t2).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_naive_model_leaves_its_input_alone():
    out, t1, t2 = scramble_inputs(2, 3)
    naive_model(out, t1, t2)
    assert not out.any()


def test_bad_names_are_course_errors():
    with pytest.raises(CourseError, match="choose one of"):
        apply("fast", *scramble_inputs())
    with pytest.raises(CourseError, match="layout"):
        random_output((2, 2), "diagonal")


def test_cpp_sources_are_cut_at_their_markers():
    assert len(sources()) == 1
    for kernel in KERNEL_NAMES:
        text = cpp_source(kernel)
        assert f"addcmul_{kernel}_(at::Tensor& self" in text
        assert "TORCH_LIBRARY_IMPL" not in text and "// ---- kernel" not in text


# ---- compiled --------------------------------------------------------------------------


@pytest.mark.compile
@settings(max_examples=40, deadline=None)
@given(
    shape=nonempty_shapes,
    layout=layouts,
    value=st.floats(-2, 2),
    seed=st.integers(0, 10_000),
    input_layout=layouts,
)
def test_strided_and_iterator_match_torch(compiled, shape, layout, value, seed, input_layout):
    out, t1, t2 = _case(shape, layout, seed, input_layout)
    expected = torch.addcmul(out, t1, t2, value=value)
    for kernel in ("strided", "iterator", "tiled"):
        result = apply(kernel, out, t1, t2, value)
        torch.testing.assert_close(result, expected, msg=f"{kernel} on {layout}/{input_layout}")
        assert result.stride() == out.stride()


@pytest.mark.compile
@settings(max_examples=40, deadline=None)
@given(shape=nonempty_shapes, layout=layouts, seed=st.integers(0, 10_000))
def test_naive_kernel_does_what_its_model_says(compiled, shape, layout, seed):
    out, t1, t2 = _case(shape, layout, seed)
    torch.testing.assert_close(apply("naive", out, t1, t2, 0.5), naive_model(out, t1, t2, 0.5))
    if out.is_contiguous():
        torch.testing.assert_close(
            apply("naive", out, t1, t2, 0.5), torch.addcmul(out, t1, t2, value=0.5)
        )


@pytest.mark.compile
@pytest.mark.parametrize("shape", [(2, 3), (5, 7), (64, 48), (3, 4, 5)])
def test_naive_kernel_is_wrong_on_transposed_outputs(compiled, shape):
    out, t1, t2 = _case(shape, "transposed", 0)
    result = apply("naive", out, t1, t2)
    assert not torch.allclose(result, torch.addcmul(out, t1, t2))
    # the right values, in the wrong places: the same multiset of numbers
    torch.testing.assert_close(
        result.flatten().sort().values, naive_model(out, t1, t2).flatten().sort().values
    )


@pytest.mark.compile
def test_broadcasting_double_and_bad_input(compiled):
    out, t1 = torch.zeros(4, 3).t(), torch.randn(1, 4)
    for kernel in ("strided", "iterator", "tiled"):
        torch.testing.assert_close(apply(kernel, out, t1, t1), torch.addcmul(out, t1, t1))
        d = torch.randn(3, 4, dtype=torch.float64)
        torch.testing.assert_close(apply(kernel, d, d, d), torch.addcmul(d, d, d))
    with pytest.raises(RuntimeError, match="cannot broadcast"):
        apply("naive", out, t1, t1)
    with pytest.raises(RuntimeError, match="one dtype"):
        apply("iterator", out, t1.double(), t1)


@pytest.mark.compile
def test_correctness_rows_and_dispatcher(compiled):
    rows = {(r["kernel"], r["output layout"]): r["matches torch"] for r in correctness_rows()}
    assert rows[("naive", "contiguous")] == "yes"
    assert rows[("naive", "transposed")] == "no" and rows[("naive", "step-sliced")] == "no"
    assert all(
        rows[(k, lay)] == "yes"
        for k in ("strided", "iterator", "tiled")
        for lay in ("contiguous", "transposed", "step-sliced", "storage-offset")
    )
    entry = dispatcher_entry("iterator")
    assert entry["schema"].startswith("course_kernels::addcmul_iterator_(Tensor(a!) self")
    assert entry["keys"] == ["CPU"] and "addcmul_kernels.cpp" in entry["dump"]


@pytest.mark.compile
@pytest.mark.parametrize(
    "out_layout, in_layout, shape",
    [
        ("transposed", "contiguous", (300, 200)),
        ("transposed", "contiguous", (130, 600)),
        ("contiguous", "transposed", (130, 129)),
        ("permuted", "contiguous", (3, 130, 140)),
        ("channels-last", "contiguous", (2, 3, 40, 50)),
        ("transposed", "expanded", (257, 129)),
        ("step-sliced", "transposed", (5, 300)),
    ],
)
def test_tiled_kernel_is_right_on_mixed_layouts_and_ragged_tiles(
    compiled, out_layout, in_layout, shape
):
    gen = torch.Generator().manual_seed(1)
    out = laid_out(torch.randn(shape, generator=gen), out_layout)
    t1 = laid_out(torch.randn(shape, generator=gen), in_layout)
    t2 = torch.randn(shape, generator=gen)
    result = apply("tiled", out, t1, t2, 0.5)
    torch.testing.assert_close(result, torch.addcmul(out, t1, t2, value=0.5))
    assert result.stride() == out.stride()
