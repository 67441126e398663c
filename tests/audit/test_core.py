"""The layout auditor: the historical broken sets, a clean CPU, and a bug it has never seen."""

from __future__ import annotations

import json

import pytest
import torch

from course import emps
from course.audit.core import (
    AuditResult,
    audit,
    audit_panel,
    cli,
    discover,
    flagged_ops,
    summary,
)
from course.audit.judge import judge, ks_distance
from course.errors import CourseError

ADAM = {"aten::addcmul_", "aten::addcdiv_"}
RANDOM = {
    "aten::normal_",
    "aten::uniform_",
    "aten::exponential_",
    "aten::random_",
    "aten::bernoulli_",
}


@pytest.fixture(scope="module")
def cpu_results() -> list[AuditResult]:
    return audit("cpu")


def test_ops_come_from_the_registry_with_enough_float32_coverage(cpu_results):
    names = {op.name for op in discover()}
    assert {"aten::addcmul_", "aten::mul_.Tensor", "aten::normal_", "aten::random_.from"} <= names
    assert not any(op.base == "aten::addmm_" for op in discover())  # not pointwise
    float32_run = {r.op for r in cpu_results if r.dtype == "float32" and r.verdict == "ok"}
    assert len(float32_run) > 100


def test_cpu_has_no_lost_or_wrong_writes(cpu_results):
    assert not [r for r in cpu_results if r.flagged or r.verdict == "error"]
    assert all(r.detail for r in cpu_results if r.verdict == "skipped")


@pytest.mark.parametrize(
    ("profile", "broken"),
    [
        ("2.2.1-macos14", ADAM | RANDOM),
        ("2.4-macos14", RANDOM),
        ("fixed-macos14", set()),
        ("macos15", set()),
    ],
)
def test_exactly_the_historical_broken_set(profile, broken):
    results = audit(f"emulated:{profile}")
    assert flagged_ops(results) == broken
    assert not [r for r in results if r.verdict in ("error", "wrong-values")]
    overloads = {r.op for r in results if r.flagged}
    if "aten::random_" in broken:
        assert {"aten::random_", "aten::random_.from", "aten::random_.to"} <= overloads
    # the contiguous-with-offset layout is not a broken one: the Placeholder does not copy it
    assert not [r for r in results if r.flagged and r.layout == "storage-offset"]


def test_the_redesigned_backend_passes_the_whole_audit():
    results = audit("emulated", backend=emps.redesigned_backend())
    assert flagged_ops(results) == set()
    assert summary(results)["ok"] > 500


def test_a_planted_cpu_bug_is_caught_and_the_table_restored():
    def lazy_sin_(self):  # the story's pattern: fine when contiguous, drops the write otherwise
        if self.is_contiguous():
            self.copy_(torch.sin(self))
        return self

    library = torch.library.Library("aten", "IMPL")
    try:
        library.impl("sin_", lazy_sin_, "CPU")
        results = audit("cpu", ops=["sin_", "cos_"], layouts=["transposed", "storage-offset"])
    finally:
        library._destroy()
    verdicts = {(r.op, r.layout): r.verdict for r in results}
    assert verdicts == {
        ("aten::sin_", "transposed"): "silent-no-write",
        ("aten::sin_", "storage-offset"): "ok",
        ("aten::cos_", "transposed"): "ok",
        ("aten::cos_", "storage-offset"): "ok",
    }
    assert flagged_ops(audit("cpu", ops=["sin_"])) == set()


def test_a_planted_random_bug_writing_half_is_wrong_values():
    def half_uniform_(self, low=0.0, high=1.0, generator=None):  # forgets every other element
        mask = torch.arange(self.numel()).reshape(self.shape) % 2 == 0
        if self.is_contiguous():
            mask = torch.ones_like(mask)
        spread = torch.arange(self.numel()).reshape(self.shape) / self.numel()  # rand would recurse
        self.copy_(torch.where(mask, spread * (high - low) + low, self))
        return self

    library = torch.library.Library("aten", "IMPL")
    try:
        library.impl("uniform_", half_uniform_, "CPU")
        (result,) = audit("cpu", ops=["uniform_"], layouts=["transposed"])
    finally:
        library._destroy()
    assert result.verdict == "wrong-values"
    assert "never written" in result.detail


def test_judge_tells_zeros_from_nothing():
    before = torch.arange(1.0, 7.0).reshape(2, 3)
    expected = before * 3
    assert judge(before, before.clone(), expected)[0] == "silent-no-write"
    assert judge(before, torch.zeros_like(before), expected)[0] == "wrong-values"
    assert judge(before, expected.clone(), expected)[0] == "ok"


def test_random_ops_are_judged_by_distribution():
    gen = torch.Generator().manual_seed(0)
    poison = torch.full((1536,), float("nan"))
    normal_a, normal_b = torch.randn(1536, generator=gen), torch.randn(1536, generator=gen)
    assert judge(poison, normal_a, normal_b, random=True)[0] == "ok"
    assert judge(poison, torch.zeros(1536), normal_b, random=True)[0] == "wrong-values"
    assert judge(poison, poison.clone(), normal_b, random=True)[0] == "silent-no-write"
    assert ks_distance(normal_a, normal_a) == 0.0


def test_bad_arguments_are_course_errors():
    with pytest.raises(CourseError, match="unknown device"):
        audit("tpu")
    with pytest.raises(CourseError, match="unknown emulated profile"):
        audit("emulated:macos9")
    with pytest.raises(CourseError, match="unknown layout"):
        audit("cpu", layouts=["diagonal"])
    with pytest.raises(CourseError, match="not an in-place"):
        audit("cpu", ops=["addmm_"])


def test_unavailable_devices_are_skipped_with_a_reason():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    results = audit("cuda", ops=["mul_"])
    assert {r.verdict for r in results} == {"skipped"}
    assert "not available" in results[0].detail


def test_cli_prints_a_table_and_json(capsys):
    assert cli(["--device", "emulated:2.4-macos14", "--layout", "transposed"]) == 0
    out = capsys.readouterr()
    assert "aten::normal_" in out.out and "flagged:" in out.out and "aten::addcmul_" not in out.out
    assert "[" in out.err  # progress goes to stderr
    assert cli(["--device", "cpu", "--json", "--op", "addcmul_"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["flagged"] == [] and len(data["results"]) == 4
    assert cli(["--device", "quantum"]) == 2
    if not torch.cuda.is_available():
        capsys.readouterr()
        assert cli(["--device", "cuda"]) == 0
        assert (
            capsys.readouterr().out.strip()
            == "cuda: skipped, CUDA is not available on this machine"
        )


def test_the_widget_redraws_and_reports_bad_values():
    panel = audit_panel("2.4-macos14", "transposed")
    assert "aten::normal_" in panel.text.value and "aten::addcmul_" not in panel.text.value
    panel.controls["device"].value = "emulated:2.2.1-macos14"
    assert "aten::addcmul_" in panel.text.value
    panel.controls["device"].value = "emulated:macos15"
    assert "silent-no-write" not in panel.text.value.split("</p>", 1)[1]
    panel.controls["layout"].options = [*panel.controls["layout"].options, "diagonal"]
    panel.controls["layout"].value = "diagonal"
    assert "unknown layout" in panel.error


def test_a_single_name_is_accepted_and_gpu_tolerance_never_hides_a_lost_write():
    (result,) = audit("emulated:2.4-macos14", ops="normal_", layouts="transposed")
    assert result.verdict == "silent-no-write"
    before = torch.arange(1.0, 7.0)
    assert judge(before, before.clone(), before * 1.0005, rtol=1e-3)[0] == "ok"
    assert judge(before, before.clone(), before * 1.5, rtol=1e-3)[0] == "silent-no-write"
