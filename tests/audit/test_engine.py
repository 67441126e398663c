"""The sweep itself: guard slots, the auditor's own failures, the learner's RNG, bad input."""

from __future__ import annotations

import pytest
import torch

from course.audit.engine import LAYOUTS, audit
from course.errors import CourseError
from course.layout.named import span


def scribbles_after_its_view(self):
    """neg_, plus one write into the storage slot just past its last element."""
    self.copy_(torch.neg(self))
    torch.Tensor.as_strided(self, (1,), (1,), self.storage_offset() + span(self)).fill_(0)
    return self


def fills_its_whole_span(self):
    """neg_, written as if the output had no holes: the holes of a strided output get zeros."""
    result = torch.neg(self)
    torch.Tensor.as_strided(self, (span(self),), (1,), self.storage_offset()).zero_()
    return self.copy_(result)


def test_writes_outside_the_output_are_caught_by_guard_slots():
    with torch.library._scoped_library("aten", "IMPL") as library:
        library.impl("neg_", scribbles_after_its_view, "CPU")
        after = audit("cpu", ops=["neg_"], dtypes="float32")
    in_place = [r for r in after if r.layout != "out=transposed"]  # neg.out is not planted
    assert {r.layout for r in in_place} == set(LAYOUTS) - {"expanded", "out=transposed"}
    assert {r.verdict for r in in_place} == {"wrong-values"}
    assert all("wrote 1 storage slots outside its view" in r.detail for r in in_place)
    with torch.library._scoped_library("aten", "IMPL") as library:
        library.impl("neg_", fills_its_whole_span, "CPU")
        holes = audit("cpu", ops=["neg_"], dtypes="float32")
    flagged = {r.layout for r in holes if r.flagged}
    assert flagged == {"step-sliced"}, [(r.layout, r.verdict, r.detail) for r in holes]


def test_a_broken_kernel_the_auditor_itself_uses_is_reported_not_a_crash():
    def mul_failing_on_wrapped_scalars(self, other):
        if other.dim() == 0:
            raise AttributeError("planted: 'float' object has no attribute 'shape'")
        return torch.ops.aten.mul.out(self, other, out=torch.empty_like(self))

    with torch.library._scoped_library("aten", "IMPL") as library:
        library.impl("mul.Tensor", mul_failing_on_wrapped_scalars, "CPU")
        results = audit("cpu", ops=["abs_", "normal_"], dtypes="float32", layouts="transposed")
    assert {r.op for r in results} == {"aten::abs_", "aten::normal_"}
    assert all(r.verdict == "error" for r in results)
    assert all("AttributeError" in r.detail and "auditor" in r.detail for r in results)


def test_audit_never_reseeds_the_global_rng():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    audit("cpu", ops=["normal_", "bernoulli_", "mul_.Tensor"], dtypes="float32")
    audit("emulated:2.4-macos14", ops=["uniform_"], layouts="transposed", dtypes="float32")
    assert torch.equal(torch.rand(3), expected)


def test_torchs_channels_last_spelling_is_accepted():
    (result,) = audit("cpu", ops="mul_.Tensor", layouts="channels_last", dtypes="float32")
    assert result.layout == "channels-last" and result.verdict == "ok"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: audit("tpu"), "unknown device 'tpu'"),
        (lambda: audit(None), "device must be a string"),
        (lambda: audit("emulated:macos9"), "unknown emulated profile 'macos9'"),
        (lambda: audit("cpu", layouts=["diagonal"]), "layout='diagonal' is not allowed"),
        (lambda: audit("cpu", layouts=[]), "non-empty"),
        (lambda: audit("cpu", ops=["addmm_"]), "not an in-place"),
        (lambda: audit("cpu", ops=[123]), "got 123"),
        (lambda: audit("cpu", ops=42), "not 42"),
        (lambda: audit("cpu", dtypes=["float8"]), "unknown dtype 'float8'"),
        (lambda: audit("cpu", progress="x"), "progress='x' is not allowed: give None or a"),
    ],
)
def test_bad_arguments_are_course_errors(call, message):
    with pytest.raises(CourseError, match=message):
        call()


def test_unavailable_devices_are_skipped_with_a_reason():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    results = audit("cuda", ops=["mul_"])
    assert {r.verdict for r in results} == {"skipped"}
    assert "not available" in results[0].detail


def test_a_single_name_is_accepted():
    (result,) = audit("emulated:2.4-macos14", ops="normal_", layouts="transposed", dtypes="float32")
    assert result.verdict == "silent-no-write"
