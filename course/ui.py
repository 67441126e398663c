"""The one widget shell every interactive figure in the course uses.

Why one shell: each widget is a function returning a `Panel`, which redraws synchronously when a
control changes. Figures are rendered to PNG bytes in an `ipywidgets.Image` (not an `Output`
widget), so the same panel works in JupyterLab, in a static HTML export, and in pytest, where a
test sets `control.value` and reads `panel.image.value`, `panel.text.value` or `panel.error`.
Any exception raised while drawing is shown as a message inside the widget, never a traceback.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import ipywidgets as widgets
from matplotlib.figure import Figure

from course.errors import CourseError


@dataclass
class Drawing:
    """What a panel's draw function returns: a figure, an HTML fragment, or both."""

    figure: Figure | None = None
    html: str = ""


def figure_png(fig: Figure, dpi: int = 90) -> bytes:
    """Render a matplotlib figure to PNG bytes (deterministic: no timestamp metadata)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def message_html(text: str, kind: str = "error") -> str:
    """An HTML box for a message; `kind` is 'error', 'info' or 'ok'."""
    colours = {"error": "#b00020", "info": "#1f5fa8", "ok": "#1b7f3b"}
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
            style = f"padding:2px 8px;background:{fill}" if fill else "padding:2px 8px"
            cells.append(f"<td style='{style}'>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table style='border-collapse:collapse'><tr>{head}</tr>{''.join(body)}</table>"


class Panel(widgets.VBox):
    """Controls on top, a figure and a text area below; redraws whenever a control changes."""

    def __init__(
        self,
        controls: Mapping[str, widgets.ValueWidget],
        draw: Callable[..., Drawing],
        *,
        title: str = "",
        button: str | None = None,
    ) -> None:
        self.controls = dict(controls)
        self._draw = draw
        # natural size (flex-start), not stretched to the notebook's width and blurred
        natural = widgets.Layout(max_width="100%", align_self="flex-start")
        self.image = widgets.Image(format="png", layout=natural)
        self.text = widgets.HTML()
        self.message = widgets.HTML()
        self.error = ""
        self.figure: Figure | None = None
        header = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        row = list(self.controls.values())
        if button is None:
            for control in row:
                control.observe(lambda _change: self.redraw(), names="value")
        else:
            run = widgets.Button(description=button, button_style="primary")
            run.on_click(lambda _b: self.redraw())
            self.button = run
            row.append(run)
        super().__init__(
            header
            + [widgets.HBox(row, layout=widgets.Layout(flex_flow="row wrap"))]
            + [self.message, self.image, self.text]
        )
        self.add_class("course-panel")  # the browser tests find every panel by this class
        self.redraw()

    def __repr__(self) -> str:  # short: nbval and stored notebooks see this text
        return f"Panel({', '.join(self.controls)})"

    def values(self) -> dict[str, object]:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def redraw(self) -> None:
        """Call the draw function with the controls' values and show what it returns."""
        try:
            drawing = self._draw(**self.values())
        except CourseError as exc:
            self._show_error(str(exc))
            return
        except Exception as exc:  # a widget must never show a traceback
            self._show_error(f"{type(exc).__name__}: {exc}")
            return
        self.error = ""
        self.message.value = ""
        self.figure = drawing.figure
        self.image.value = figure_png(drawing.figure) if drawing.figure is not None else b""
        self.image.layout.display = None if drawing.figure is not None else "none"
        self.text.value = drawing.html

    def _show_error(self, text: str) -> None:
        self.error = text
        self.message.value = message_html(text, "error")


def widget_check() -> Panel:
    """A tiny slider that proves widgets render: moving it redraws a bar chart of n squares."""

    def draw(n: int) -> Drawing:
        fig = Figure(figsize=(4, 1.8))
        ax = fig.add_subplot()
        ax.bar(range(1, n + 1), [i * i for i in range(1, n + 1)], color="#1f5fa8")
        ax.set(title=f"squares of 1..{n}", xlabel="i", ylabel="i²")
        fig.tight_layout()
        return Drawing(fig, message_html(f"Widgets work: the slider says {n}.", "ok"))

    slider = widgets.IntSlider(value=4, min=1, max=12, description="n")
    return Panel({"n": slider}, draw, title="Move the slider: the chart should follow")
