"""The three compiled addcmul_ kernels against torch, for random shapes and layouts.

Everything marked `compile` builds the extension (once per session, ~10-60 s the first time,
then cached); CI has g++ and runs these. The naive kernel must be right on contiguous outputs
and wrong on transposed ones, exactly as `naive_model` (its memory-order retelling) predicts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course.errors import CourseError
from course.kernels.cpp import (
    KERNEL_NAMES,
    CompilerMissing,
    apply,
    compiler_status,
    correctness_rows,
    load,
    make_output,
    naive_model,
    scramble_inputs,
    sources,
)
from course.kernels.cpp.bench import benchmark, plot, shape_for
from course.kernels.cpp.build import clear_stale_lock
from course.kernels.cpp.gpu import triton_demo, triton_device
from course.kernels.cpp.kernels import cpp_source, dispatcher_entry
from tests.strategies import nonempty_shapes

layouts = st.sampled_from(["contiguous", "transposed", "sliced"])


@pytest.fixture(scope="module")
def compiled():
    load()


def _case(shape, layout, seed, input_layout="contiguous"):
    gen = torch.Generator().manual_seed(seed)
    out = make_output(shape, layout, gen)
    return out, make_output(shape, input_layout, gen), make_output(shape, input_layout, gen)


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


def test_compiler_status_reports_a_missing_compiler(monkeypatch):
    monkeypatch.setenv("CXX", "no-such-compiler-xyz")
    status = compiler_status()
    assert not status.ok and "C++ compiler" in status.message()
    with pytest.raises(CompilerMissing, match="missing a C\\+\\+ compiler"):
        load(force=True)


def test_a_stale_build_lock_is_removed_and_a_fresh_one_kept(tmp_path):
    lock = tmp_path / "lock"
    lock.touch()
    assert not clear_stale_lock(tmp_path) and lock.exists()
    os.utime(lock, (0, 0))
    assert clear_stale_lock(tmp_path) and not lock.exists()


def test_bad_names_are_course_errors():
    with pytest.raises(CourseError, match="choose one of"):
        apply("fast", *scramble_inputs())
    with pytest.raises(CourseError, match="layout"):
        make_output((2, 2), "diagonal")
    with pytest.raises(CourseError, match="multiples of 1024"):
        shape_for(1000)


def test_cpp_sources_are_cut_at_their_markers():
    assert len(sources()) == 1
    for kernel in KERNEL_NAMES:
        text = cpp_source(kernel)
        assert f"addcmul_{kernel}_(at::Tensor& self" in text
        assert "TORCH_LIBRARY_IMPL" not in text and "// ---- kernel" not in text


# ---- compiled --------------------------------------------------------------------------


@pytest.mark.compile
def test_compiler_is_found_here():
    assert compiler_status().ok, compiler_status().message()


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
    for kernel in ("strided", "iterator"):
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
    for kernel in ("strided", "iterator"):
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
    assert rows[("naive", "transposed")] == "no" and rows[("naive", "sliced")] == "no"
    assert all(
        rows[(k, lay)] == "yes"
        for k in ("strided", "iterator")
        for lay in ("contiguous", "transposed", "sliced")
    )
    entry = dispatcher_entry("iterator")
    assert entry["schema"].startswith("course_kernels::addcmul_iterator_(Tensor(a!) self")
    assert entry["keys"] == ["CPU"] and "addcmul_kernels.cpp" in entry["dump"]


@pytest.mark.compile
def test_benchmark_measures_ratios_in_one_run(compiled):
    timings, bandwidth = benchmark([1 << 12], repeats=2, kernels=("naive", "iterator"))
    assert bandwidth > 0
    assert {(t.kernel, t.layout) for t in timings} == {
        (k, lay) for k in ("native", "naive", "iterator") for lay in ("contiguous", "transposed")
    }
    assert all(t.ratio_to_native == 1.0 for t in timings if t.kernel == "native")
    assert len(plot(timings, bandwidth).axes) == 4


@pytest.mark.compile
def test_an_edited_kernel_rebuilds_in_the_same_process(tmp_path):
    """The FIELD_NOTES pitfall: a rebuilt extension must re-register, not abort the process."""
    edited = (
        sources()[0]
        .read_text()
        .replace("out[i] += v * a[i] * b[i];", "out[i] += 2 * v * a[i] * b[i];")
    )
    (tmp_path / "addcmul_kernels.cpp").write_text(edited)
    script = textwrap.dedent(f"""
        import torch
        from course.kernels.cpp import load, op
        load()
        load(source_dir={str(tmp_path)!r})
        x = torch.zeros(3)
        op("naive")(x, torch.ones(3), torch.ones(3))
        print(x.tolist())
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[2.0, 2.0, 2.0]"


def test_triton_demo_skips_cleanly_without_a_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert triton_device() is None
    assert triton_demo().startswith("skipping the optional Triton section: no CUDA GPU")


def test_triton_naive_kernel_scrambles_in_the_interpreter():
    """Runs only where Triton is installed (never needed): its interpreter works on CPU tensors."""
    pytest.importorskip("triton")
    script = "from course.kernels.cpp.gpu import triton_demo; print(triton_demo())"
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "scrambled exactly as naive_model predicts: True" in done.stdout
