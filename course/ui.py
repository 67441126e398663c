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
Every slider is a `NumberSlider` (made by `number_slider`, or wrapped so by the panel): its range
is what the panel accepts, and a value typed in its box that is out of range or not a number is
refused with a message, never clamped. A text box completing from a long list of names is a
`CompletingText`, whose list the page fills as the learner types.
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
import math
import re
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


# ipywidgets' own sliders clamp a value typed in their readout to their range, or put the old one
# back, on the page, without a word to Python: a panel shows each as a `NumberSlider` (below).
NUMBER_SLIDERS = (
    widgets.IntSlider,
    widgets.FloatSlider,
    widgets.FloatLogSlider,
    widgets.IntRangeSlider,
    widgets.FloatRangeSlider,
)
BUSY = "Updating ..."  # the status while a panel draws, so no interaction looks ignored

# What ipywidgets leaves out for a learner on a keyboard or a screen reader, put back from the
# page: (1) it draws a slider with noUiSlider and passes it no handle attributes, so the handle a
# screen reader lands on (role "slider") has no name, nor has the value box beside it (a
# `NumberSlider`'s, which has no label of its own): both are named after the slider's label;
# (2) a control disabled while it has the focus (Run, during `Panel.working`) drops the focus to
# the page, and a keyboard user must start over from the top: when it is enabled again and
# nothing else took the focus, it gets it back; (3) JupyterLab takes the arrow keys pressed on a
# dropdown or a slider's handle in a notebook's output (ArrowDown selects the next cell): those
# controls are marked as keeping their keys; (4) a box with completion from a long list
# (`CompletingText`) gets, in its <datalist>, only the first COMPLETIONS names that start with
# what is typed, then those that contain it, refilled on every key in the page (the kernel
# hears nothing until Enter). The script runs from a hidden image whose empty data: source
# fails at once (nothing is requested): an HTML widget's <script> never runs.
_ACCESS_JS = """
const image = this;
const set = (el, key, value) => el && el.getAttribute(key) !== value && el.setAttribute(key, value);
const ownKeys = (panel) => panel.querySelectorAll('select, .noUi-handle')
  .forEach((el) => set(el, 'data-lm-suppress-shortcuts', 'true'));
const name = (panel) => panel.querySelectorAll('.course-slider').forEach((pair) => {
  const label = pair.querySelector('.widget-label')?.textContent.trim();
  if (!label) return;
  pair.querySelectorAll('.noUi-handle').forEach((handle) => set(handle, 'aria-label', label));
  set(pair.querySelector('.course-slider-value input'), 'aria-label', label + ' value');
});
const complete = (panel) => panel.querySelectorAll('.course-completions').forEach((source) => {
  const input = source.closest('.course-completing')?.querySelector('input[list]');
  if (!input || !input.list || input.__courseCompletes) return;
  input.__courseCompletes = true;
  const names = source.dataset.names.split(' ');
  let offered = null;
  const fill = () => {
    const typed = input.value.trim() || source.dataset.blank;
    const first = names.filter((n) => n.startsWith(typed));
    const then = names.filter((n) => !n.startsWith(typed) && n.includes(typed));
    const shown = first.concat(then).slice(0, Number(source.dataset.limit));
    if (shown.join(' ') === offered) return;  // the same list: the page need not lay it out
    offered = shown.join(' ');
    input.list.replaceChildren(...shown.map((n) => new Option('', n)));
  };
  input.addEventListener('input', fill);
  fill();
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
  complete(panel);
  panel.addEventListener('focusout', (event) => {
    if (event.target.disabled && !event.relatedTarget) dropped = event.target;
  });
  new MutationObserver((changes) => {
    if (changes.every((c) => c.target.tagName === 'DATALIST')) return;  // a list refilled
    name(panel);
    ownKeys(panel);
    complete(panel);
    changes.filter((c) => c.attributeName === 'disabled').forEach((c) => giveBack(c.target));
  }).observe(panel, {childList: true, subtree: true, attributeFilter: ['disabled']});
};
start(50);
"""
# How a panel looks where ipywidgets and JupyterLab fall short, from a <style> the panel carries
# (an HTML widget's styles apply; it is the same wherever the panel is shown): (1) the keyboard's
# focus on a text box (a slider's value box is one), a dropdown, a slider's handle, or a button
# is a 3 px ring outside the control, not JupyterLab's 1 px border colour (WCAG 2.4.7: focus
# visible); (2) words break only between words: JupyterLab prints an output's <pre> with
# word-break: break-all ("ten|sor2"), and `overflow-wrap: anywhere` lets a table's or a column's
# width shrink below its words ("th|ere"); here a word is cut only when it is wider than its
# whole line.
PANEL_CSS = """
.course-panel input:focus-visible, .course-panel select:focus-visible,
.course-panel textarea:focus-visible, .course-panel button:focus-visible,
.course-panel .noUi-handle:focus-visible {
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


Number = int | float
# A number as a learner types it: 4, -3, 0.9, .5, 1e-3 (a word such as "inf" is not one).
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
# A range as the slider's own readout writes it ("1 - 100"), or "1 to 100", "1, 100", "1 100".
_RANGE = re.compile(rf"\s*({_NUMBER})\s*(?:-|–|to|,|\s)\s*({_NUMBER})\s*")


class _Checked(traitlets.TraitType):
    """A trait whose owner checks every value set (None included, which `Any` lets through)."""

    def validate(self, obj: NumberSlider, value: object) -> object:
        return obj.checked(value)


class NumberSlider(widgets.HBox):
    """A slider with a value box that refuses out loud: what `number_slider` returns, and what
    a `Panel` shows for any numeric ipywidgets slider it is given.

    ipywidgets' slider readout clamps a typed `99` to the maximum, or puts the old value back
    for `abc`, on the page, and Python never learns what was typed. Here the slider has no
    readout; beside it a text box (sent on Enter or when it loses the focus) is read in Python:
    a value in range moves the slider, anything else leaves it where it is and is reported to
    the callbacks given to `on_refusal` (a `Panel` shows it above its figure), in words that say
    what was typed and what is allowed. `value`, `description` and `disabled` are the slider's,
    so a panel treats this like any other control; a value set from Python outside the range
    raises CourseError instead of being clamped.
    """

    value = _Checked()
    description = traitlets.Unicode()
    disabled = traitlets.Bool(False)

    def __init__(self, slider: widgets.ValueWidget) -> None:
        if not isinstance(slider, NUMBER_SLIDERS):
            kinds = ", ".join(kind.__name__ for kind in NUMBER_SLIDERS)
            raise ValueError(f"{type(slider).__name__} is not one of the sliders {kinds}")
        self.slider = slider
        logarithmic = isinstance(slider, widgets.FloatLogSlider)
        ends = (slider.base**slider.min, slider.base**slider.max) if logarithmic else None
        self.low, self.high = ends or (slider.min, slider.max)
        self.whole = isinstance(slider, (widgets.IntSlider, widgets.IntRangeSlider))
        self.paired = isinstance(slider, (widgets.IntRangeSlider, widgets.FloatRangeSlider))
        self._format = slider.readout_format
        self._refused: list[Callable[[str], None]] = []
        slider.readout = False
        slider.continuous_update = False  # a drag or a held arrow key: one redraw, on release
        width = "7.5em" if self.paired else "4.5em"
        self.box = widgets.Text(
            value=self.shown(slider.value),
            continuous_update=False,
            tooltip=f"{slider.description}: type {self.allowed()}, then Enter",
            layout=widgets.Layout(width=width),
        )
        self.box.add_class("course-slider-value")  # ACCESS_HELPER names it after the slider
        super().__init__([slider, self.box], value=slider.value, description=slider.description)
        self.add_class("course-slider")
        traitlets.link((self, "value"), (slider, "value"))
        traitlets.link((self, "disabled"), (slider, "disabled"))
        traitlets.link((self, "disabled"), (self.box, "disabled"))
        self.observe(lambda change: setattr(self.box, "value", self.shown(change.new)), "value")
        self.box.observe(lambda change: self.typed(change.new), names="value")

    def allowed(self) -> str:
        """What the box takes, in words: "a whole number from 1 to 12"."""
        kind = "whole number" if self.whole else "number"
        span = f"from {self.shown(self.low)} to {self.shown(self.high)}"
        if self.paired:
            return f"two {kind}s, first - last, {span}"
        return f"a {kind} {span}"

    def shown(self, value: object) -> str:
        """A value as the box writes it: in the slider's readout format, or to six digits
        where that format would round what was typed (0.905 on a slider of 0.01 steps), in
        the format's notation (01's lr box writes 3e-03, then 5.62341e-03, not 0.00562341)."""
        if isinstance(value, tuple):
            return " - ".join(map(self.shown, value))
        if self.whole or not isinstance(value, float):
            return str(value)
        rounded = format(value, self._format)  # as the slider's own readout wrote it
        if float(rounded) == value:
            return rounded
        if not self._format.endswith("e"):
            return f"{value:.6g}"
        digits = (format(value, f".{n}e") for n in range(1, 6))  # the fewest that hold it
        return next((text for text in digits if float(text) == value), format(value, ".5e"))

    def on_refusal(self, callback: Callable[[str], None]) -> None:
        """Call `callback(message)` whenever the box refuses what was typed."""
        self._refused.append(callback)

    def typed(self, text: str) -> None:
        """What the learner typed in the box: move the slider, or say why not and show the
        value it keeps."""
        if text == self.shown(self.value):
            return  # the box showing the slider's own value (the echo of a move)
        try:
            value = self.read(text)
        except CourseError as exc:
            self.box.value = self.shown(self.value)
            message = (
                f"{self.description}: you typed {text.strip()!r}, which {exc}. Type "
                f"{self.allowed()}; {self.description} stays at {self.shown(self.value)}."
            )
            for callback in self._refused:
                callback(message)
            return
        self.value = value
        self.box.value = self.shown(value)  # "7 " or "7.0" typed for 7: the box says 7

    def read(self, text: str) -> Number | tuple[Number, Number]:
        """The value typed, or CourseError saying what is wrong with it (its words finish the
        sentence "you typed 'x', which ...")."""
        if not self.paired:
            return self._number(text)
        match = _RANGE.fullmatch(text)
        if match is None:
            raise CourseError("is not two numbers")
        first, last = (self._number(part) for part in match.groups())
        if first > last:
            raise CourseError("starts after it ends")
        return first, last

    def _number(self, text: str) -> Number:
        if re.fullmatch(rf"\s*{_NUMBER}\s*", text) is None:
            raise CourseError("is not a number")
        number = float(text)
        if self.whole and not number.is_integer():
            raise CourseError("is not a whole number")
        if number < self.low:
            raise CourseError(f"is below {self.shown(self.low)}")
        if number > self.high:
            raise CourseError(f"is above {self.shown(self.high)}")
        return int(number) if self.whole else number

    def checked(self, value: object) -> object:
        """A value set from Python: in range or refused, never clamped to the nearest end."""
        parts = value if isinstance(value, tuple) and self.paired else (value,)
        numbers = all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in parts
        )
        whole = not self.whole or all(isinstance(v, int) for v in parts)
        paired = not self.paired or (isinstance(value, tuple) and len(value) == 2)
        if not (numbers and whole and paired and all(self.low <= v <= self.high for v in parts)):
            raise CourseError(
                f"{self.description}={value!r} is not allowed: it takes {self.allowed()}"
            )
        if self.paired and value[0] > value[1]:
            raise CourseError(
                f"{self.description}={value!r} is not allowed: it starts after it ends"
            )
        return value


def number_slider(
    description: str,
    value: Number | tuple[Number, Number],
    low: Number,
    high: Number,
    step: Number = 1,
) -> NumberSlider:
    """The course's one way to make a slider: whole numbers when `value`, `low`, `high` and
    `step` are all ints, a range (two handles) when `value` is a pair. Its range is exactly
    what the panel accepts, and a value typed in its box outside it is refused out loud
    (`NumberSlider`), never clamped or reverted in silence."""
    parts = value if isinstance(value, tuple) else (value,)
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (*parts, low, high, step))
    kinds = {
        (True, False): widgets.IntSlider,
        (False, False): widgets.FloatSlider,
        (True, True): widgets.IntRangeSlider,
        (False, True): widgets.FloatRangeSlider,
    }
    kind = kinds[whole, isinstance(value, tuple)]
    if not low < high or step <= 0 or not all(low <= v <= high for v in parts):
        raise CourseError(
            f"slider {description!r}: {value!r} must lie in [{low}, {high}], low below high, "
            f"and the step ({step}) must be positive"
        )
    slider = kind(value=value, min=low, max=high, step=step, description=description)
    if not whole:  # the step's decimals: 0.01 -> ".2f" (ipywidgets' default is ".2f" for all)
        slider.readout_format = f".{max(0, -math.floor(math.log10(step)))}f"
    return NumberSlider(slider)


# The most names a `CompletingText`'s list offers at a time. The page filters a <datalist> on
# every key and lays out its pop-up: with all 2,584 of torch's ops in it, Chromium took 0.2-0.5 s
# a key and over a second to open it on a click (issue 38). With 12, typing into 05's op box in
# JupyterLab cost what typing into 04's plain boxes did (about 25 ms a key on a loaded machine).
COMPLETIONS = 12


class CompletingText(widgets.HBox):
    """A text box that completes from a long list of names, sent to the page once.

    A Combobox with every name as an option is slow to type in (see COMPLETIONS), and one that
    asked the kernel for a short list on every key would send two messages a key. Here the box
    starts with an empty list and the names travel once, in a hidden element beside it; the
    page-side helper (`ACCESS_HELPER`, item 4) refills the list as the learner types. `value`
    is sent on Enter (or when the box loses the focus), so typing never redraws a panel.
    `blank` is what the list matches while nothing is typed.
    """

    value = traitlets.Unicode()
    description = traitlets.Unicode()
    disabled = traitlets.Bool(False)

    def __init__(
        self, value: str, names: list[str], *, description: str, placeholder: str, blank: str = ""
    ) -> None:
        self.box = widgets.Combobox(
            value=value,
            options=[],
            ensure_option=False,
            continuous_update=False,
            description=description,
            placeholder=placeholder,
        )
        source = (
            f"<div class='course-completions' hidden data-limit='{COMPLETIONS}' "
            f"data-blank='{html.escape(blank)}' data-names='{html.escape(' '.join(names))}'></div>"
        )
        self.source = widgets.HTML(source, layout=widgets.Layout(display="none"))
        super().__init__([self.box, self.source], value=value, description=description)
        self.add_class("course-completing")
        traitlets.link((self, "value"), (self.box, "value"))
        traitlets.link((self, "disabled"), (self.box, "disabled"))


class Panel(widgets.VBox):
    """Controls on top, a figure and a text area below; redraws whenever a control changes.

    Sliders come from `number_slider`: they report their value when released (a drag or a held
    arrow key would otherwise queue one full redraw per position), and a value typed in a
    slider's box that it refuses is said above the figure, which still shows the old value.
    Every redraw shows a status line before it starts work; an error that comes back after a
    change says so, so no change looks ignored.

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
        self.controls = {name: _checked_slider(control) for name, control in controls.items()}
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
        self._changes: list[str] = []  # the settings changed since the last drawing
        self._same_error = 0  # drawings in a row that ended in the error shown
        self._after = ""  # the changes the error shown came back after
        self._refusal = ("", 0)  # the last refusal of a typed value, and how often in a row
        self.figure: Figure | None = None
        self.button: widgets.Button | None = None
        self._last_run: dict[str, object] | None = None
        # JupyterLab may deliver widget messages on several kernel threads (subshells): the
        # second click of a double click must wait for the first run, then see it is a repeat.
        self._drawing = threading.RLock()
        header = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        row = list(self.controls.values())
        for name, control in self.controls.items():
            control.observe(lambda change, name=name: self._changed(name, change.new), "value")
            if isinstance(control, NumberSlider):
                control.on_refusal(self._refused)
        if button is not None:
            run = widgets.Button(description=button, button_style="primary")
            run.on_click(lambda _b: self.click())
            self.button = run
            row.append(run)
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
            if not self._changes and self.button is not None:
                self._changes.append(f"pressing {self.button.description} again")
            self.redraw()

    def _note(self, text: str, kind: str = "info") -> None:
        """A passing remark above the figure (an error being shown stays above it)."""
        shown = [message_html(self._error_text(), "error")] if self.error else []
        self.message.value = "".join(shown + ([message_html(text, kind)] if text else []))
        self._noted = bool(text)

    def _refused(self, text: str) -> None:
        """A slider's box refused what was typed: say so (the figure still shows the value
        kept). Typed again, the note counts, or the second refusal would look ignored."""
        last, count = self._refusal
        count = count + 1 if self._noted and text == last else 1
        self._refusal = (text, count)
        self._note(text + (f" ({count} times in a row.)" if count > 1 else ""), "warning")

    def _changed(self, name: str, value: object) -> None:
        """A control changed: a panel without a button redraws; one with a button drops its
        note, which was about the settings shown before (errors stay)."""
        shown = value if isinstance(value, (str, int, float, tuple)) else type(value).__name__
        self._changes.append(f"{name} = {shown!r}")
        if self.button is None:
            self.redraw()
            return
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
        self._same_error = 0
        self._changes = []
        self._note(drawing.note)
        self._last_run = self.values()
        self.figure = drawing.figure
        shown = drawing.figure is not None
        self.image.value = figure_png(drawing.figure) if shown else b""
        self.image.layout.display = None if shown else "none"
        # the <img>'s title: the name a screen reader reads for the figure
        self.image.tooltip = (figure_alt(drawing.figure) or None) if shown else None
        self.text.value = drawing.html

    def _error_text(self) -> str:
        """The error shown, with how often in a row it came back, and after what."""
        if self._same_error < 2:
            return self.error
        return (
            f"{self.error}\n(The same error again after {self._after}: "
            f"{self._same_error} times in a row.)"
        )

    def _show_error(self, text: str) -> None:
        """The message replaces the result: a stale figure under an error would mislead. The
        same error as before says so, and after which change, or the panel would look as if
        it never heard the change."""
        self._same_error = self._same_error + 1 if text == self.error else 1
        self._after = ", ".join(self._changes) or "a redraw"
        self._changes = []
        self.error = text
        self._noted = False
        self.message.value = message_html(self._error_text(), "error")
        self.figure = None
        self.image.value = b""
        self.image.layout.display = "none"
        self.image.tooltip = None
        self.text.value = ""
        self._last_run = None


def _checked_slider(control: widgets.ValueWidget) -> widgets.ValueWidget:
    """A numeric ipywidgets slider as a NumberSlider (what is typed in its box is checked in
    Python, not clamped on the page); any other control as it is."""
    return NumberSlider(control) if isinstance(control, NUMBER_SLIDERS) else control


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

    return Panel(
        {"n": number_slider("n", 4, 1, 12)}, draw, title="Move the slider: the chart should follow"
    )
