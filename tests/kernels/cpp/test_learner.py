"""The learner's own C++ kernel: compiled in a second, checked in a child process, never trusted.

The compiled tests need g++ (CI has it) but not torch's headers: each build takes about a second.
"""

from __future__ import annotations

import pytest
import torch

from course import journal
from course.errors import CourseError
from course.exercises import check
from course.kernels.cpp import learner
from tests.kernels.exercises.compiled.corpus_write_kernel import CORPORA, REFERENCE_KERNEL


def test_the_source_must_be_a_kernel():
    with pytest.raises(CourseError, match="extern"):
        learner.compile_kernel(42)
    with pytest.raises(CourseError, match="extern"):
        learner.compile_kernel("int main() { return 0; }")
    with pytest.raises(CourseError, match="too long"):
        learner.compile_kernel(learner.ENTRY + " " * learner.MAX_SOURCE)


def test_no_compiler_is_a_clear_skip(monkeypatch):
    monkeypatch.setenv("CXX", "no-such-compiler-xyz")
    with pytest.raises(learner.CompileError, match="skipped: no C\\+\\+ compiler"):
        learner.compile_kernel(learner.SKELETON)
    verdict = check("07.write_kernel", REFERENCE_KERNEL)
    assert "skipped: no C++ compiler" in verdict.message
    assert not verdict.attempted  # a skip is no failed attempt: nothing is journaled


@pytest.mark.compile
def test_builds_are_cached_by_source(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    first = learner.compile_kernel(REFERENCE_KERNEL)
    assert first.exists() and learner.compile_kernel(REFERENCE_KERNEL) == first
    assert learner.compile_kernel(learner.SKELETON) != first


@pytest.mark.compile
def test_compile_errors_count_lines_from_the_learners_own_source(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    broken = learner.SKELETON.replace("int64_t n = 1;", "int64 n = 1;")
    with pytest.raises(learner.CompileError) as info:
        learner.compile_kernel(broken)
    line = broken.splitlines().index("  int64 n = 1;") + 1
    assert f"line {line}: error:" in str(info.value)
    assert str(tmp_path) not in str(info.value)


@pytest.mark.compile
def test_a_pasted_prelude_is_not_defined_twice(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    broken = learner.PRELUDE + learner.SKELETON.replace("int64_t n = 1;", "int64 n = 1;")
    with pytest.raises(learner.CompileError) as info:
        learner.compile_kernel(broken)
    line = broken.splitlines().index("  int64 n = 1;") + 1
    assert f"line {line}: error:" in str(info.value) and "View" not in str(info.value)


@pytest.mark.compile
def test_reference_passes_and_the_skeleton_is_caught():
    assert learner.check_source(REFERENCE_KERNEL).passed
    naive = learner.check_source(learner.SKELETON)
    assert not naive.passed and naive.variant == "a transposed output"
    assert "as if a and b were laid out like out" in naive.problem


@pytest.mark.compile
def test_out_of_bounds_writes_and_crashes_are_reported_not_fatal():
    just_outside = REFERENCE_KERNEL.replace("out.data[o] +=", "out.data[o + 30] +=")
    near = learner.check_source(just_outside)
    assert not near.passed and "outside the output's storage" in near.problem
    far = learner.check_source(
        REFERENCE_KERNEL.replace("out.data[o] +=", "out.data[o + (1L << 40)] +=")
    )
    assert not far.passed and "crashed the process" in far.problem
    into_input = learner.check_source(REFERENCE_KERNEL.replace("out.data[o] +=", "a.data[x] +="))
    assert "wrote into an input" in into_input.problem


def test_the_variants_vary_dims_offsets_layouts_of_each_tensor_and_value():
    shapes = [shape for _, shape, *_ in learner.VARIANTS]
    assert max(len(s) for s in shapes) >= 5 and {0, 1} <= {len(s) for s in shapes}
    outs, firsts, seconds = ({v[i] for v in learner.VARIANTS} for i in (2, 3, 4))
    assert "storage-offset" in outs & firsts & seconds
    # a and b apart, in strides and in offset: b read through a's layout must fail somewhere
    assert any(v[3] == "transposed" and v[4] == "storage-offset" for v in learner.VARIANTS)
    assert len({v[5] for v in learner.VARIANTS}) >= 2
    assert () in shapes and any(0 in s for s in shapes)  # a 0-d output, an empty one
    assert max(len(s) for s in shapes) > 5  # the notebook names 5-d: more than that too
    # one layout with gaps for all three: a slot-by-slot walk "when all strides agree" must fail
    assert any(v[2] == v[3] == v[4] == "step-sliced" for v in learner.VARIANTS)


@pytest.mark.compile
def test_kernels_run_together_are_reported_one_by_one_past_a_crash():
    crashing = REFERENCE_KERNEL.replace("out.data[o] +=", "out.data[o + (1L << 40)] +=")
    batch = [learner.SKELETON, crashing, REFERENCE_KERNEL]
    learner.run_together(batch)
    first, crashed, right = (learner.check_source(source) for source in batch)
    assert first.variant == "a transposed output" and "crashed" in crashed.problem
    assert right.passed


@pytest.mark.compile
def test_a_signature_of_other_types_is_a_compile_error_not_garbage(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    for old, new in (("float value", "double value"), ("int64_t ndim", "int ndim")):
        with pytest.raises(learner.CompileError, match="keep the skeleton's signature"):
            learner.compile_kernel(REFERENCE_KERNEL.replace(old, new))


def test_the_skeleton_as_printed_is_not_attempted(tmp_path, monkeypatch):
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    for untouched in (learner.SKELETON, learner.PRELUDE + "\n" + learner.SKELETON.strip()):
        verdict = check("07.write_kernel", untouched)
        assert not verdict.passed and not verdict.attempted and "skeleton" in verdict.message
    assert journal.load() == []


@pytest.mark.compile
def test_write_kernel_feedback_names_the_variant():
    (corpus,) = CORPORA
    verdict = check("07.write_kernel", corpus.wrong["no offsets"][0]())
    assert "an output with a storage offset" in verdict.message
    assert check("07.write_kernel", "not C++").message.startswith("give the C++ source")


def test_the_variants_pass_six_dims_32_bit_offsets_and_round_values():
    assert max(len(v.shape) for v in learner.VARIANTS) >= 8  # a fixed array of 6 dims fails
    assert any(v.far >= 2**32 for v in learner.VARIANTS)  # an int or unsigned offset fails
    # 0.5 and -1.5 survive a value rounded to quarters, to two decimals, to float16: e does not
    assert any(abs(v.value * 100 - round(v.value * 100)) > 1e-3 for v in learner.VARIANTS)


def test_a_far_view_points_at_the_same_elements():
    tensor = learner._guarded(torch.randn(3, 4), "transposed")
    keep: list = []
    near, far = tensor.view(keep), tensor.view(keep, learner.FAR)
    assert far.offset == near.offset + learner.FAR
    assert (far.data + 4 * far.offset) % 2**64 == near.data + 4 * near.offset


@pytest.mark.compile
def test_an_index_past_a_fixed_array_traps_and_is_named():
    overrun = REFERENCE_KERNEL.replace(
        "    out.data[o] += value",
        "    int64_t seen[2];\n    seen[ndim - 1] = o;\n    out.data[o] += value",
    )
    report = learner.check_source(overrun)
    assert not report.passed and "past the end of a fixed-size array" in report.problem
