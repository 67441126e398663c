"""HTML pieces the course shows: a message box and a table, with no widget stack behind them.

Why apart from `course.ui`: the doctor's report, the progress table and the auditor's results
are HTML too, and they must work where ipywidgets is missing or broken (the doctor exists for
exactly that machine). `course.ui`'s panels show these same pieces inside a widget.
"""

from __future__ import annotations

import html
from collections.abc import Mapping


def message_html(text: str, kind: str = "error") -> str:
    """An HTML box for a message; `kind` is 'error', 'warning' (a value refused, nothing
    broken), 'info' or 'ok'. Every colour is at least 4.5:1 against white (WCAG AA text)."""
    colours = {"error": "#b00020", "warning": "#8a5300", "info": "#1f5fa8", "ok": "#1b7f3b"}
    colour = colours.get(kind, colours["info"])
    body = html.escape(text).replace("\n", "<br>")
    return (
        f'<div style="border-left:4px solid {colour};padding:4px 8px;color:{colour}">{body}</div>'
    )


def html_table(rows: list[Mapping[str, object]], colours: Mapping[str, str] | None = None) -> str:
    """A plain HTML table from dict rows; a cell whose text is a key of `colours` gets that fill."""
    if not rows:
        return "<p><em>(no rows)</em></p>"
    colours = colours or {}
    head = "".join(
        f"<th style='text-align:left;padding:2px 8px'>{html.escape(k)}</th>" for k in rows[0]
    )
    body = []
    for row in rows:
        cells = []
        for value in row.values():
            text = html.escape(str(value))
            fill = colours.get(str(value))
            # JupyterLab right-aligns table cells by default; prose and labels read from the left
            style = "padding:2px 8px;text-align:left" + (f";background:{fill}" if fill else "")
            cells.append(f"<td style='{style};{_cell_wrap(text)}'>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    table = f"<table style='border-collapse:collapse'><tr>{head}</tr>{''.join(body)}</table>"
    # a wide table scrolls inside its own box instead of pushing the notebook sideways
    return f"<div style='max-width:100%;overflow-x:auto;contain:inline-size'>{table}</div>"


def _cell_wrap(text: str) -> str:
    """Short cells never break ("silent-no-write" stays whole); long prose wraps at spaces."""
    return "white-space:nowrap" if len(text) <= 40 else "white-space:normal;min-width:16em"
