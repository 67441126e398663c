"""The layout auditor's widget (notebook 08): pick a device, a layout and a dtype; press Audit.

The sweep is `course.audit.engine`'s; this module only shows it, and is the only part of the
auditor that imports ipywidgets.
"""

from __future__ import annotations

import ipywidgets as widgets

from course.audit.args import DTYPES
from course.audit.engine import LAYOUTS, audit
from course.audit.judge import COLOURS, VERDICTS, AuditResult
from course.audit.report import summary, summary_line, table_rows
from course.layout.named import require_layout
from course.markup import html_table
from course.progressbar import Progress
from course.ui import Drawing, Panel


def audit_panel(profile: str | None = None, layout: str = "transposed") -> Panel:
    """A widget: pick an emulated profile (or the CPU), a layout and a dtype; press Audit.

    While it audits, the controls are disabled and a status line counts the ops.
    """
    from course import emps

    profile = emps.get_profile(profile or emps.DEFAULT_PROFILE).name
    layout = require_layout(layout, (*LAYOUTS, "all"))
    devices = [f"emulated:{name}" for name in emps.PROFILES] + ["cpu"]
    controls = {
        "device": widgets.Dropdown(options=devices, value=f"emulated:{profile}", description="on"),
        "layout": widgets.Dropdown(options=[*LAYOUTS, "all"], value=layout, description="layout"),
        "dtype": widgets.Dropdown(options=[*DTYPES, "all"], value="float32", description="dtype"),
        "show_ok": widgets.Checkbox(value=False, description="show ok rows"),
    }

    def draw(device: str, layout: str, dtype: str, show_ok: bool, panel: Panel) -> Drawing:
        with panel.working(f"Auditing on {device}..."):
            return draw_audit(
                device,
                layout,
                dtype,
                show_ok,
                progress=panel.progress,
            )

    return Panel(controls, draw, title="Layout auditor", button="Audit")


def draw_audit(
    device: str,
    layout: str,
    dtype: str = "float32",
    show_ok: bool = False,
    progress: Progress | None = None,
) -> Drawing:
    """The auditor's results as a colour table, findings first, with a summary line."""
    layout = require_layout(layout, (*LAYOUTS, "all"))
    key = (device, layout, dtype)
    if key not in _AUDITS:
        layouts = None if layout == "all" else [layout]
        dtypes = None if dtype == "all" else [dtype]
        _AUDITS[key] = audit(device, layouts=layouts, dtypes=dtypes, progress=progress)
    results = sorted(_AUDITS[key], key=lambda r: (VERDICTS.index(r.verdict) == 0, r.op))
    rows = table_rows(results, only_findings=not show_ok)
    line = summary_line(device, summary(results))
    return Drawing(html=f"<p>{line}</p>" + html_table(rows, COLOURS))


_AUDITS: dict[tuple[str, str, str], list[AuditResult]] = {}  # the widget's audits, by settings
