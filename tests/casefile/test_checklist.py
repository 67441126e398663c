"""The debugging checklist: it flags what the story found, and stays quiet on the fixed model."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from course import emps
from course.casefile.checklist import (
    KNOWN_MPS_BUGS,
    Finding,
    checklist,
    checklist_html,
    problems,
    report,
    sae_after_one_step,
    version_findings,
    version_tuple,
)
from course.errors import CourseError
from course.mystery import case as case_module
from tests.mystery.runs import spec_for, untrained_case


@pytest.fixture(autouse=True)
def no_case_opened(monkeypatch):
    """No mystery case open in this session, as in notebooks 00-09 (other tests open some)."""
    monkeypatch.setattr(case_module, "_OPENED", [])


@pytest.fixture(scope="module")
def broken():
    with emps.use_profile("2.2.1-macos14"):
        return sae_after_one_step("transposed", n_features=64)


def test_the_broken_model_is_flagged_on_the_emulated_device(broken):
    model, optimizer = broken
    with emps.use_profile("2.2.1-macos14"):
        found = problems(checklist(model, optimizer))
    targets = {(f.check, f.target, f.severity) for f in found}
    assert ("contiguity", "encoder.weight", "fail") in targets
    assert ("optimizer state", "encoder.weight exp_avg_sq", "fail") in targets
    assert ("optimizer state", "encoder.weight exp_avg", "fail") in targets
    assert ("versions", "emulated profile", "fail") in targets
    assert not any(f.target.startswith("decoder") for f in found)


def test_the_checklist_table_reads_from_the_left(broken):
    """JupyterLab right-aligns table cells unless told otherwise; notebook 09 showed it so."""
    with emps.use_profile("2.2.1-macos14"):
        text = checklist_html(checklist(*broken))
    cells = text.count("<td ")
    assert cells >= 8 and text.count("text-align:left") == cells + 4  # and the 4 headers


def test_the_fixed_model_on_macos15_is_clean():
    with emps.use_profile("macos15"):
        model, optimizer = sae_after_one_step("contiguous", n_features=64)
        assert problems(checklist(model, optimizer)) == []


def test_on_the_cpu_non_contiguity_is_only_a_warning():
    model, optimizer = sae_after_one_step("transposed", device="cpu", n_features=64)
    found = problems(checklist(model, optimizer))
    assert found and {f.severity for f in found} == {"warn"}
    assert "stride [1, 64]" in report(found)
    assert "<table" in checklist_html(found)


def test_mixed_devices_dtypes_and_float64_on_mps_like():
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3).double())
    found = {(f.check, f.severity) for f in problems(checklist(model))}
    assert ("dtype", "warn") in found
    mixed = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3).to(emps.DEVICE))
    assert ("device", "fail") in {(f.check, f.severity) for f in checklist(mixed)}


def test_state_on_another_device_is_flagged():
    model = nn.Linear(3, 3)
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(2, 3)).sum().backward()
    optimizer.step()
    optimizer.state[model.weight]["exp_avg"] = optimizer.state[model.weight]["exp_avg"].to(
        emps.DEVICE
    )
    found = problems(checklist(model, optimizer))
    assert [f.target for f in found if f.severity == "fail"] == ["weight exp_avg"]


def test_versions_against_the_known_bug_table():
    assert version_tuple("2.13.0+cpu") == (2, 13) and version_tuple("") == (0, 0)
    old = {f.severity for f in version_findings("mps", "2.2.1", "14.4")}
    assert old == {"ok", "fail"}
    middle = [f.severity for f in version_findings("mps", "2.4.0", "14.4")]
    assert middle == ["ok", "ok", "fail"]
    newer = [f.severity for f in version_findings("mps", "2.12.0", "14.4")]
    assert newer == ["ok", "ok", "warn"]
    assert {f.severity for f in version_findings("mps", "2.2.1", "15.1")} == {"ok"}
    assert {f.severity for f in version_findings("cpu", "2.2.1", "")} == {"ok"}
    assert all(bug.references for bug in KNOWN_MPS_BUGS)
    assert any("118115" in ref for ref in KNOWN_MPS_BUGS[0].references)


def test_buffers_count_too():
    model = nn.Linear(4, 3)
    model.register_buffer("scale", torch.ones(1, 3).expand(4, 3))
    found = problems(checklist(model))
    assert [(f.check, f.target, f.severity) for f in found] == [("contiguity", "scale", "warn")]


def test_an_optimizer_of_another_model_is_flagged():
    model, other = nn.Linear(3, 3), nn.Linear(3, 3)
    found = problems(checklist(model, torch.optim.Adam(other.parameters())))
    assert ("optimizer", "param_groups", "fail") in {(f.check, f.target, f.severity) for f in found}
    assert any("never updated" in f.message and f.severity == "warn" for f in found)
    partial = problems(checklist(model, torch.optim.SGD([model.weight], lr=0.1)))
    assert [(f.check, f.severity) for f in partial] == [("optimizer", "warn")]
    assert "bias" in partial[0].message


def test_a_model_without_parameters_is_checked_not_crashed():
    found = checklist(nn.ReLU())
    assert problems(found) == [] and "0 parameters" in report(found)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: checklist(None), "needs an nn.Module, not NoneType"),
        (lambda: checklist(nn.Linear(2, 2), "adam"), "must be a torch.optim.Optimizer"),
        (lambda: version_tuple("garbage"), "cannot read a version from 'garbage'"),
    ],
)
def test_bad_input_is_a_course_error(call, message):
    with pytest.raises(CourseError, match=message):
        call()


def test_report_lines_wrap_at_spaces_only():
    long = [Finding("contiguity", "encoder.weight", "fail", "non-contiguous " * 12)]
    lines = report(long, width=60).splitlines()
    assert len(lines) > 1 and all(len(line) <= 60 for line in lines)
    assert all(word == "non-contiguous" for line in lines[1:] for word in line.split())


def test_with_a_case_open_the_checklist_tells_its_device_from_the_sessions_profile():
    """Outside `case.use_device()` the emulated device runs the session's (story's) profile: a
    fail there would be a false lead for the case, so it says which profile it checked."""
    case = untrained_case(spec_for("large"))
    model = nn.Linear(3, 2).to(emps.DEVICE)
    with emps.use_profile("2.2.1-macos14"):
        outside = {f.target: f for f in checklist(model)}["emulated profile"]
    assert outside.severity == "warn"
    assert "session's profile" in outside.message and "case.use_device()" in outside.message
    with case.use_device():
        inside = {f.target: f for f in checklist(model)}["emulated profile"]
    assert inside.severity == "ok" and "your case's device" in inside.message
    case_module._OPENED.clear()  # the case closed: the story's profile is the problem again
    with emps.use_profile("2.2.1-macos14"):
        story = {f.target: f for f in checklist(model)}["emulated profile"]
    assert story.severity == "fail"
