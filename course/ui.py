"""The one widget shell every interactive figure in the course uses.

Why one shell: each widget is a function returning a `Panel`, which redraws synchronously when a
control changes. Figures are rendered to PNG bytes in an `ipywidgets.Image` (not an `Output`
widget), so the same panel works in JupyterLab, in a static HTML export, and in pytest, where a
test sets `control.value` and reads `panel.image.value`, `panel.text.value` or `panel.error`.
Any exception raised while drawing is shown as a message inside the widget, never a traceback,
and the figure it replaces is cleared, so a stale picture never sits under an error.

Long work (training, auditing) runs inside `panel.working("Training...")`: the panel's controls
are disabled and a status line appears at once; `panel.progress` is a progress callback
(`course.progressbar.Progress`: done, total, note) that updates that line. A draw function
reaches its panel by declaring a `panel` parameter: the panel passes itself, from the very first
drawing (made once the panel is built), so no widget needs to smuggle the panel into its own
callback. A repeated click with unchanged settings says so instead of silently doing nothing.
Figures are sized and rendered by `course.figures` (matplotlib only), and the HTML pieces a panel
shows (`message_html`, `html_table`) by `course.markup`; this module is the ipywidgets half, and
the only shared module that imports ipywidgets, so the command line and the checkers never need it.

Accessible by design: every control must carry a `description` (the label a screen reader
reads; Panel refuses one without), a panel's figure has alt text (`course.figures.figure_alt`:
what `describe` attached, then its titles, axis labels and legend), and sliders' handles are named
after their labels, a control disabled during work gives the keyboard's focus back, and
dropdowns and sliders keep their arrow keys from JupyterLab (`ACCESS_HELPER`).
"""

from __future__ import annotations

import contextlib
import html
import inspect
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import ipywidgets as widgets
import traitlets
from matplotlib.figure import Figure

from course.errors import CourseError
from course.figures import describe, figure_alt, figure_png, fitted_figure, integer_ticks
from course.markup import message_html


@dataclass
class Drawing:
    """What a panel's draw function returns: a figure, an HTML fragment, or both.

    `note` is a passing remark about this drawing ("run #1 already used these settings"): the
    panel shows it above the figure and drops it as soon as a control changes, where it would
    describe settings no longer shown.
    """

    figure: Figure | None = None
    html: str = ""
    note: str = ""


SLIDERS = (
    widgets.IntSlider,
    widgets.FloatSlider,
    widgets.FloatLogSlider,
    widgets.IntRangeSlider,
    widgets.FloatRangeSlider,
    widgets.SelectionSlider,
    widgets.SelectionRangeSlider,
)
BUSY = "Updating ..."  # the status while a panel draws, so no interaction looks ignored

# What ipywidgets leaves out for a learner on a keyboard or a screen reader, put back from the
# page: (1) it draws a slider with noUiSlider and passes it no handle attributes, so the handle a
# screen reader lands on (role "slider") has no name, nor has the editable readout beside it:
# both are named after the slider's own label; (2) a control disabled while it has the focus
# (Run, during `Panel.working`) drops the focus to the page, and a keyboard user must start
# over from the top: when it is enabled again and nothing else took the focus, it gets it back;
# (3) JupyterLab takes the arrow keys pressed on a dropdown or a slider's handle in a notebook's
# output (ArrowDown selects the next cell): those controls are marked as keeping their keys.
# The script runs from a hidden image whose empty data: source fails at once (nothing is
# requested): an HTML widget's <script> never runs.
_ACCESS_JS = """
const image = this;
const set = (el, key, value) => el && el.getAttribute(key) !== value && el.setAttribute(key, value);
const ownKeys = (panel) => panel.querySelectorAll('select, .noUi-handle')
  .forEach((el) => set(el, 'data-lm-suppress-shortcuts', 'true'));
const name = (panel) => panel.querySelectorAll('.widget-slider').forEach((slider) => {
  const label = slider.querySelector('.widget-label')?.textContent.trim();
  if (!label) return;
  slider.querySelectorAll('.noUi-handle').forEach((handle) => set(handle, 'aria-label', label));
  const readout = slider.querySelector('.widget-readout');
  set(readout, 'role', 'textbox');
  set(readout, 'aria-label', label + ' value');
});
let dropped = null;  // the control whose disabling dropped the focus (the browser blurs it)
const giveBack = (el) => {
  const lost = !document.activeElement || document.activeElement === document.body;
  if (!el.disabled && el === dropped && lost) el.focus({preventScroll: true});
  if (!el.disabled && el === dropped) dropped = null;
};
const start = (tries) => {
  const panel = image.closest('.course-panel');
  if (!panel) return tries && setTimeout(() => start(tries - 1), 100);
  name(panel);
  ownKeys(panel);
  panel.addEventListener('focusout', (event) => {
    if (event.target.disabled && !event.relatedTarget) dropped = event.target;
  });
  new MutationObserver((changes) => {
    name(panel);
    ownKeys(panel);
    changes.filter((c) => c.attributeName === 'disabled').forEach((c) => giveBack(c.target));
  }).observe(panel, {childList: true, subtree: true, attributeFilter: ['disabled']});
};
start(50);
"""
# How a panel looks where ipywidgets and JupyterLab fall short, from a <style> the panel carries
# (an HTML widget's styles apply; it is the same wherever the panel is shown): (1) the keyboard's
# focus on a text box, a dropdown, a slider's value box or handle, or a button is a 3 px ring
# outside the control, not JupyterLab's 1 px border colour (WCAG 2.4.7: focus visible);
# (2) words break only between words: JupyterLab prints an output's <pre> with word-break:
# break-all ("ten|sor2"), and `overflow-wrap: anywhere` lets a table's or a column's width shrink
# below its words ("th|ere"); here a word is cut only when it is wider than its whole line.
PANEL_CSS = """
.course-panel input:focus-visible, .course-panel select:focus-visible,
.course-panel textarea:focus-visible, .course-panel button:focus-visible,
.course-panel .widget-readout:focus-visible, .course-panel .noUi-handle:focus-visible {
  outline: 3px solid #1f5fa8 !important;
  outline-offset: 2px;
  box-shadow: 0 0 0 5px #ffffff;
}
.course-panel, .course-panel * {
  word-break: normal !important;
  overflow-wrap: break-word !important;
}
"""
ACCESS_HELPER = (
    f"<style>{PANEL_CSS}</style>"
    f'<img src="data:," alt="" hidden onerror="{html.escape(_ACCESS_JS)}">'
)


class FigureImage(widgets.Image):
    """A panel's figure. Its `tooltip` becomes the <img>'s title, the name a screen reader reads
    for it (an Image has no alt). ipywidgets 8.1's view reads the widget's `description` before
    it sets a tooltip and fails on an Image, which has none: this one syncs an empty one."""

    description = traitlets.Unicode("").tag(sync=True)


class Panel(widgets.VBox):
    """Controls on top, a figure and a text area below; redraws whenever a control changes.

    Sliders report their value when released (a drag or a held arrow key would otherwise queue
    one full redraw per position), and every redraw shows a status line before it starts work.

    `draw` is called with each control's value by name, and with `panel=` this panel when it
    declares a parameter of that name (to work inside `panel.working(...)` and report progress).
    `rereads=True` is for a draw that reads what no control shows (a saved file): every press
    of the button redraws, where a repeat would otherwise only be told it changed nothing.
    """

    def __init__(
        self,
        controls: Mapping[str, widgets.ValueWidget],
        draw: Callable[..., Drawing],
        *,
        title: str = "",
        button: str | None = None,
        rereads: bool = False,
    ) -> None:
        self.controls = dict(controls)
        self._rereads = rereads
        self._draw = draw
        self._gets_panel = "panel" in inspect.signature(draw).parameters
        if "panel" in self.controls:
            raise ValueError("a control may not be named 'panel': draw functions receive the panel")
        _require_labels(self.controls)
        # natural size (flex-start), not stretched to the notebook's width and blurred; no margin,
        # which beside max-width 100% pushed a full-width figure 4 px past the cell (a scrollbar)
        natural = widgets.Layout(max_width="100%", align_self="flex-start", margin="0")
        self.image = FigureImage(format="png", layout=natural)
        self.text = widgets.HTML()
        self.message = widgets.HTML()
        self.status = widgets.HTML()
        self.error = ""
        self._noted = False  # whether self.message holds a note (not an error)
        self._repeats = 0  # presses in a row with the settings of the last run
        self.figure: Figure | None = None
        self.button: widgets.Button | None = None
        self._last_run: dict[str, object] | None = None
        # JupyterLab may deliver widget messages on several kernel threads (subshells): the
        # second click of a double click must wait for the first run, then see it is a repeat.
        self._drawing = threading.RLock()
        header = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        row = list(self.controls.values())
        for control in row:
            if isinstance(control, SLIDERS):
                control.continuous_update = False
        if button is None:
            for control in row:
                control.observe(lambda _change: self.redraw(), names="value")
        else:
            run = widgets.Button(description=button, button_style="primary")
            run.on_click(lambda _b: self.click())
            self.button = run
            row.append(run)
            for control in self.controls.values():
                control.observe(lambda _change: self._drop_note(), names="value")
        super().__init__(
            header
            + [widgets.HBox(row, layout=widgets.Layout(flex_flow="row wrap"))]
            + [widgets.HTML(ACCESS_HELPER)]
            + [self.status, self.message, self.image, self.text]
        )
        self.add_class("course-panel")  # the browser tests find every panel by this class
        self.redraw()  # the panel is whole now: a draw function may use it from the first drawing

    def __repr__(self) -> str:  # the text a stored notebook shows before its cell has run
        names = ", ".join(self.controls)
        return f"Interactive widget ({names}): run this cell in JupyterLab to use it."

    def click(self) -> None:
        """What the button does: run, unless nothing changed since the last successful run.

        A repeat says so, and counts the presses, so every press changes what the panel shows
        (a second press on an unchanged note would look ignored); a panel that rereads runs."""
        with self._drawing:
            repeat = self._last_run is not None and self._last_run == self.values()
            if repeat and not self.error and not self._rereads:
                self._repeats += 1
                count = f" (pressed {self._repeats} times)" if self._repeats > 1 else ""
                self._note(
                    "Same settings as the last run: the result below is already theirs. "
                    f"Change a setting, then run again.{count}"
                )
                return
            self.redraw()

    def _note(self, text: str) -> None:
        self.message.value = message_html(text, "info") if text else ""
        self._noted = bool(text)

    def _drop_note(self) -> None:
        """A control changed: a note about the settings shown no longer applies (errors stay)."""
        self._repeats = 0
        if self._noted:
            self._note("")

    @contextlib.contextmanager
    def working(self, label: str) -> Iterator[None]:
        """Show `label` at once and disable every control until the block ends (also on error).

        Afterwards the status and the controls are as they were before, so a block inside the
        redraw's own status (or inside another block) hands back to it.
        """
        parts = [*self.controls.values(), *([self.button] if self.button else [])]
        enabled = [part for part in parts if not part.disabled]
        for part in enabled:
            part.disabled = True
        with self._status(label):
            try:
                yield
            finally:
                for part in enabled:
                    part.disabled = False

    @contextlib.contextmanager
    def _status(self, label: str) -> Iterator[None]:
        """`label` in the status line for the block, then the status it replaced."""
        before = self.status.value
        self.status.value = message_html(label, "info")
        try:
            yield
        finally:
            self.status.value = before

    def progress(self, done: int, total: int, note: str = "") -> None:
        """A progress callback (`course.progressbar.Progress`) showing in the status line."""
        shown = f", {note}" if note else ""
        self.status.value = message_html(f"working: {done}/{total}{shown}", "info")

    def values(self) -> dict[str, object]:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def redraw(self) -> None:
        """Call the draw function with the controls' values and show what it returns.

        The status line says BUSY before any work starts (a cached case still takes seconds to
        draw and render), and clears once the result is shown.
        """
        with self._drawing, self._status(BUSY):
            self._redraw()

    def _redraw(self) -> None:
        extra = {"panel": self} if self._gets_panel else {}
        try:
            drawing = self._draw(**self.values(), **extra)
        except CourseError as exc:
            self._show_error(str(exc))
            return
        except Exception as exc:  # a widget must never show a traceback
            self._show_error(f"{type(exc).__name__}: {exc}")
            return
        self.error = ""
        self._note(drawing.note)
        self._last_run = self.values()
        self.figure = drawing.figure
        shown = drawing.figure is not None
        self.image.value = figure_png(drawing.figure) if shown else b""
        self.image.layout.display = None if shown else "none"
        # the <img>'s title: the name a screen reader reads for the figure
        self.image.tooltip = (figure_alt(drawing.figure) or None) if shown else None
        self.text.value = drawing.html

    def _show_error(self, text: str) -> None:
        """The message replaces the result: a stale figure under an error would mislead."""
        self.error = text
        self._noted = False
        self.message.value = message_html(text, "error")
        self.figure = None
        self.image.value = b""
        self.image.layout.display = "none"
        self.image.tooltip = None
        self.text.value = ""
        self._last_run = None


def _require_labels(controls: Mapping[str, widgets.ValueWidget]) -> None:
    """Every control needs a description: it is the label shown beside it and the name a screen
    reader reads (ipywidgets ties it to the input), so an unlabelled control is refused here."""
    unlabelled = [
        name for name, c in controls.items() if not str(getattr(c, "description", "") or "").strip()
    ]
    if unlabelled:
        raise ValueError(
            f"controls {unlabelled} have no description; give each one (the label a screen "
            "reader reads for it)"
        )


def widget_check() -> Panel:
    """A tiny slider that proves widgets render: moving it redraws a bar chart of n squares."""

    def draw(n: int) -> Drawing:
        fig = fitted_figure(360, 170)
        ax = fig.add_subplot()
        ax.bar(range(1, n + 1), [i * i for i in range(1, n + 1)], color="#1f5fa8")
        ax.set(title=f"squares of 1..{n}", xlabel="i", ylabel="i²")
        integer_ticks(ax)
        describe(fig, f"A bar chart of the squares of 1 to {n}, one bar each")
        return Drawing(fig, message_html(f"Widgets work: the slider says {n}.", "ok"))

    slider = widgets.IntSlider(value=4, min=1, max=12, description="n")
    return Panel({"n": slider}, draw, title="Move the slider: the chart should follow")
