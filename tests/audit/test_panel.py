"""The auditor's widget: audits on click, refuses bad values, shows progress while it works."""

from __future__ import annotations

import pytest

from course.audit.panel import audit_panel
from course.errors import CourseError


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: audit_panel(profile="nope"), "unknown emulated profile 'nope'"),
        (lambda: audit_panel(layout="diagonal"), "layout='diagonal' is not allowed"),
    ],
)
def test_bad_arguments_are_course_errors(call, message):
    with pytest.raises(CourseError, match=message):
        call()


def test_the_widget_audits_on_click_and_reports_bad_values():
    panel = audit_panel("2.4-macos14", "transposed")
    assert "aten::normal_" in panel.text.value and "aten::addcmul_" not in panel.text.value
    panel.controls["device"].value = "emulated:2.2.1-macos14"
    panel.button.click()
    assert "aten::addcmul_" in panel.text.value
    panel.controls["device"].value = "emulated:macos15"
    panel.button.click()
    assert "silent-no-write" not in panel.text.value.split("</p>", 1)[1]
    panel.controls["layout"].options = [*panel.controls["layout"].options, "diagonal"]
    panel.controls["layout"].value = "diagonal"
    panel.button.click()
    assert "layout='diagonal' is not allowed" in panel.error


def test_the_widget_disables_its_button_and_shows_progress_while_auditing(monkeypatch):
    from course.audit import panel as widget

    panel = audit_panel("2.4-macos14", "transposed")
    seen = []

    def watched(*args, progress=None, **kwargs):
        progress(1, 2, "aten::abs_")
        seen.append((panel.button.disabled, panel.controls["device"].disabled, panel.status.value))
        return []

    monkeypatch.setattr(widget, "audit", watched)
    panel.controls["layout"].value = "step-sliced"
    panel.button.click()
    (during,) = seen
    assert during[0] and during[1] and "1/2" in during[2]
    assert not panel.button.disabled and panel.status.value == ""
