"""The layout auditor's public names, in one place: `from course.audit.core import audit`.

Notebook 08, lesson 08's checks and the mystery case import from here. The sweep lives in
`course.audit.engine`, the command line in `course.audit.cli`, the widget in `course.audit.panel`;
the widget's names (`audit_panel`, `draw_audit`) are imported on first use, so importing this
module, as every checker does, never needs ipywidgets.
"""

from __future__ import annotations

from course.audit.args import discover
from course.audit.engine import LAYOUTS, audit, layout_rows
from course.audit.judge import AuditResult, judge
from course.audit.report import flagged_ops, summary

__all__ = [
    "LAYOUTS",
    "AuditResult",
    "audit",
    "discover",
    "flagged_ops",
    "judge",
    "layout_rows",
    "summary",
]

_WIDGET = ("audit_panel", "draw_audit")  # course.audit.panel's, imported when first asked for


def __getattr__(name: str) -> object:
    """`audit_panel` and `draw_audit` from the widget module, the first time one is used."""
    if name in _WIDGET:
        from course.audit import panel

        return getattr(panel, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
