"""PyTorch's own layout tests on the emulated device: they pass where the auditor flags a bug."""

from __future__ import annotations

import sys

import pytest

from course.audit import opinfo
from course.errors import CourseError


def test_the_opinfo_checks_miss_the_in_place_bug_but_catch_out_on_2_2_1():
    rows = {(r["test"], r["op"]): r["result"] for r in opinfo.opinfo_rows("2.2.1-macos14")}
    assert rows == {
        ("test_noncontiguous_samples", "addcmul"): "passed",
        ("test_noncontiguous_samples", "addcdiv"): "passed",
        ("test_out", "addcmul"): "FAILED",
        ("test_out", "addcdiv"): "FAILED",
    }
    fixed = opinfo.opinfo_rows("fixed-macos14")
    assert {r["result"] for r in fixed} == {"passed"}


def test_a_missing_internal_api_is_one_clear_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.testing._internal.common_methods_invocations", None)
    opinfo._testing.cache_clear()
    try:
        text = opinfo.opinfo_table()
        assert text.startswith("PyTorch's internal test API is not available")
        assert "skipped" in text and "\n" not in text
        with pytest.raises(CourseError, match="not available"):
            opinfo.opinfo_rows()
    finally:
        opinfo._testing.cache_clear()


def test_bad_names_are_course_errors():
    with pytest.raises(CourseError, match="unknown emulated profile"):
        opinfo.opinfo_rows("macos9")
    with pytest.raises(CourseError, match="no OpInfo named"):
        opinfo.opinfo_rows(ops=("addcmul", "frobnicate"))
