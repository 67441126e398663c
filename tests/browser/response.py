"""How long a course panel takes to show that it heard an interaction (issue 27: 200 ms).

The clock runs in the browser, so polling from Python adds nothing to it: before each interaction
a listener notes `performance.now()` at the first input event Playwright dispatches (pointerdown,
keydown, input, change; a drag: its release), and a MutationObserver notes the first change to
the panel's output part: the status line, message, figure or text below the control row. The
control row is left out on purpose: a slider moving its own handle or a checkbox ticking itself
says nothing about whether the kernel heard it. Response = first such change - the event. The
kernel's messages are traced as well: they split the time (see `where_the_time_went`) and count
the new figures the kernel sends, so a drag can be held to one redraw.

The notebook is not Run All'd: only its first code cell (the imports) and the cells that build
the chosen panels run, found by their source, so the test stays inside CI's budget.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import cycle
from typing import TYPE_CHECKING

from tests.browser.lab_page import _PROGRESS_JS, move_slider, wait_until_quiet

if TYPE_CHECKING:  # `make test` collects this folder without needing playwright
    from playwright.sync_api import Locator, Page

RESPONSE_LIMIT_MS = 200.0  # issue 27: a change or a status within 200 ms of each interaction
# Issue 38: a click in a text box, a name typed a key at a time, and Enter, timed from the click
# to the panel's first change: 4-6.7 s in 05's op box (its list held every op), 0.2-0.4 s in
# 04's boxes. What the page itself takes for the same click, keys and Enter in a bare <input>
# (Playwright's keys cost ~20 ms each here, 0.14-0.24 s for 11 keys, even on an idle machine)
# is measured just before; the box, its completion list and the kernel's answer may add 300 ms.
TYPED_LIMIT_MS = 300.0
# Names typed into a box with completion, in turn (a retry must type a name not shown yet):
# 11 characters each, as in the measurement.
TYPED_NAMES = ("addcdiv.out", "addcmul.out")
CELLS_TIMEOUT_S = 240  # the chosen cells of the slowest notebook (training included)
NO_START_S = 30  # no chosen cell started by then: the request was lost, ask once more
HEARD_TIMEOUT_S = 30  # no change in the output part by then: the interaction was ignored
DRAG_MOVES = 6  # positions a drag passes: a slider sending each would queue as many redraws
MAX_SETTINGS_TRIED = 1  # a button panel: settings changed (then Run); each may train

# Arms the measurement on one panel; the result lands in window.__courseResponse. The kernel's
# messages are traced too, to say where the time went: when the page sent each widget message
# after the event (a text box sends two on Enter: "submit", then its value), when the kernel
# started on it (its "busy" status, stamped by the kernel's clock) and each reply to it (stamped
# when sent, and when it arrived).
_ARM_JS = r"""(panel, startOn) => {
  window.__courseResponseStop?.();
  const parts = [...panel.children];
  const row = parts.findIndex((p) => p.classList.contains('widget-hbox'));
  const outputs = parts.slice(row + 1);
  const state = {event: null, kind: '', mutation: null, part: '', sent: {}, busy: {},
                 replies: [], figures: 0};
  const observer = new MutationObserver((records) => {
    const now = performance.now();
    if (state.event === null || state.mutation !== null) return;
    const record = records.find((r) => outputs.some((o) => o.contains(r.target)));
    if (!record) return;
    const part = outputs.find((o) => o.contains(record.target));
    state.mutation = now;
    const text = part.innerText.trim().replace(/\s+/g, ' ');
    state.part = part.querySelector('img') ? 'the figure' : (text.slice(0, 48) || '(cleared)');
  });
  observer.observe(panel, {subtree: true, childList: true, attributes: true, characterData: true});
  const heard = (event) => {
    if (state.event === null) { state.event = performance.now(); state.kind = event.type; }
  };
  const types = startOn.length ? startOn
    : ['pointerdown', 'mousedown', 'keydown', 'input', 'change', 'click'];
  // on the document: a drag may be released off the panel
  for (const type of types) document.addEventListener(type, heard, {capture: true});
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const onPage = (date) => Date.parse(date) - performance.timeOrigin;
  const trace = (_kernel, {msg, direction}) => {
    const now = performance.now();
    // every new figure the kernel sends counts, from arming on (a drag must not redraw before
    // its release): an update carrying an image's bytes, the one binary value a panel has
    const paths = (msg.content?.data?.buffer_paths || []).map((p) => p.join('.'));
    if (direction === 'recv' && msg.header.msg_type === 'comm_msg' && paths.includes('value')) {
      state.figures += 1;
    }
    if (state.event === null || state.mutation !== null) return;
    const parent = msg.parent_header?.msg_id;
    if (direction === 'send' && msg.header.msg_type === 'comm_msg') {
      state.sent[msg.header.msg_id] = now;
    } else if (direction === 'recv' && parent in state.sent) {
      if (msg.header.msg_type === 'status' && msg.content.execution_state === 'busy') {
        state.busy[parent] = onPage(msg.header.date);
      } else if (msg.header.msg_type === 'comm_msg') {
        state.replies.push({parent, kernel: onPage(msg.header.date), recv: now});
      }
    }
  };
  kernel.anyMessage.connect(trace);
  window.__courseResponseStop = () => {
    observer.disconnect();
    kernel.anyMessage.disconnect(trace);
    for (const type of types) document.removeEventListener(type, heard, {capture: true});
  };
  window.__courseResponse = state;
}"""

_READ_JS = "() => window.__courseResponse"
_STOP_JS = "() => window.__courseResponseStop?.()"

# Clears every output and execution count (as Run All does), selects the notebook's first code
# cell and every code cell whose source contains one of the snippets, and runs them (the Run
# menu's "Run Selected Cell"); returns how many cells it chose.
_RUN_CELLS_JS = """async (snippets) => {
  const app = window.jupyterapp;
  const notebook = app.shell.currentWidget.content;
  await app.commands.execute('notebook:clear-all-cell-outputs');
  const code = notebook.widgets.filter((c) => c.model.type === 'code');
  for (const cell of code) cell.model.executionCount = null;
  const chosen = code.filter((c, k) => k === 0
    || snippets.some((s) => c.model.sharedModel.getSource().includes(s)));
  notebook.activeCellIndex = notebook.widgets.indexOf(chosen[0]);
  notebook.deselectAll();
  for (const cell of chosen) notebook.select(cell);
  app.commands.execute('notebook:run-cell');
  return chosen.length;
}"""


@dataclass
class Response:
    """One measured interaction: what was done, how long until the panel showed a change
    (None: it showed none), which part changed, and whether it was the single allowed retry."""

    panel: str
    action: str
    ms: float | None
    part: str = ""
    retry: bool = False
    breakdown: str = ""
    figures: tuple[int, int] | None = None  # (new figures expected, drawn), where counted
    limit_ms: float = RESPONSE_LIMIT_MS

    @property
    def missed(self) -> bool:
        return self.ms is None or self.ms > self.limit_ms

    @property
    def redrew_as_expected(self) -> bool:
        return self.figures is None or self.figures[0] == self.figures[1]

    def describe(self) -> str:
        shown = "no visible change" if self.ms is None else f"{self.ms:.0f} ms ({self.part})"
        if self.limit_ms != RESPONSE_LIMIT_MS:
            shown += f", budget {self.limit_ms:.0f} ms"
        where = f" [{self.breakdown}]" if self.breakdown else ""
        drawn = f", {self.figures[1]} new figure(s)" if self.figures else ""
        retry = " (retry)" if self.retry else ""
        return f"{self.panel}: {self.action}: {shown}{drawn}{retry}{where}"


@dataclass
class ResponseReport:
    """Every measured interaction of the session; printed after the run as median and max per
    panel (a pytest plugin object: registered by the test, so conftest.py stays as it is)."""

    responses: list[Response] = field(default_factory=list)
    seconds: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> build, all

    def per_panel(self) -> dict[str, list[Response]]:
        panels: dict[str, list[Response]] = {}
        for response in self.responses:
            panels.setdefault(response.panel, []).append(response)
        return panels

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.responses:
            return
        terminalreporter.section("panel response times (issue 27: each within 200 ms)")
        for name, (build, total) in self.seconds.items():
            terminalreporter.write_line(f"{name}: {total:.1f} s, building its panels {build:.1f} s")
        for panel, found in self.per_panel().items():
            times = [r.ms for r in found if r.ms is not None]
            retried = sum(r.retry for r in found)
            summary = (
                f"median {statistics.median(times):.0f} ms, max {max(times):.0f} ms"
                if times
                else "no visible change"
            )
            terminalreporter.write_line(
                f"{panel}: {len(found)} interactions, {summary}"
                + (f", {retried} retried" if retried else "")
            )
            for response in found:
                terminalreporter.write_line(f"    {response.describe()}")


def run_cells(page: Page, snippets: list[str]) -> list[str]:
    """Run the notebook's first code cell and the cells containing `snippets`; returns the
    errors they showed (empty when every chosen cell ran cleanly)."""
    chosen = page.evaluate(_RUN_CELLS_JS, snippets)
    start = asked = time.monotonic()
    while True:
        progress = page.evaluate(_PROGRESS_JS)
        if progress["errors"]:
            return progress["errors"]
        ran = sum(count is not None for count in progress["counts"])
        if ran >= chosen and not progress["pending"] and progress["status"] == "idle":
            return []
        now = time.monotonic()
        if not ran and not progress["pending"] and now - asked > NO_START_S and asked == start:
            page.evaluate(_RUN_CELLS_JS, snippets)  # FIELD_NOTES: a first request can be lost
            asked = now
        if now - start > CELLS_TIMEOUT_S:
            return [f"{chosen} cells not finished after {CELLS_TIMEOUT_S} s: {progress}"]
        time.sleep(0.5)


@dataclass
class Interaction:
    """What a learner does to a panel: `act` is timed (returns a description); `prepare`, if
    any, runs first, untimed (a setting changed before Run, text typed before Enter: nothing
    but the control itself has to show them)."""

    label: str
    act: Callable[[], str]
    prepare: Callable[[], str] | None = None
    start_on: tuple[str, ...] = ()  # events that start the clock (default: any input event)
    figures: int | None = None  # new figures it must draw, from arming on (None: not counted)
    limit_ms: float = RESPONSE_LIMIT_MS
    # the page's own time for the same input in a bare element, measured just before (ms):
    # the budget is then that plus limit_ms
    baseline: Callable[[], float] | None = None


def measure(
    page: Page, panel: Locator, title: str, interaction: Interaction, retry: bool = False
) -> Response:
    """Arm the clock on `panel`, do the interaction, wait until the panel showed a change (or
    a while without one), then until the kernel is quiet again (the redraw finished)."""
    prepared = ""
    limit = interaction.limit_ms
    if interaction.baseline is not None:
        limit += interaction.baseline()
    if interaction.prepare is not None:
        prepared = interaction.prepare() + ", then "
        wait_until_quiet(page)  # whatever the preparation sent is handled before the clock runs
    panel.evaluate(_ARM_JS, list(interaction.start_on))
    action = prepared + interaction.act()
    deadline = time.monotonic() + HEARD_TIMEOUT_S
    while page.evaluate(_READ_JS)["mutation"] is None and time.monotonic() < deadline:
        time.sleep(0.05)
    wait_until_quiet(page)
    state = page.evaluate(_READ_JS)
    page.evaluate(_STOP_JS)
    heard = state["event"] is not None and state["mutation"] is not None
    ms = state["mutation"] - state["event"] if heard else None
    kind = state["kind"] or "no input event"
    what = f"{interaction.label}: {action} ({kind})"
    figures = (interaction.figures, state["figures"]) if interaction.figures is not None else None
    breakdown = where_the_time_went(state)
    return Response(title, what, ms, state["part"], retry, breakdown, figures, limit)


def where_the_time_went(state: dict) -> str:
    """The response split along its way, from the trace _ARM_JS records: the page until it sent
    its message, on to the kernel, in the kernel until the reply that was drawn was sent, back
    to the page, and drawn. Empty when the trace is incomplete."""
    drawn = [r for r in state["replies"] if state["mutation"] and r["recv"] <= state["mutation"]]
    if not drawn or drawn[-1]["parent"] not in state["busy"]:
        return ""
    reply = drawn[-1]
    sent, busy = state["sent"][reply["parent"]], state["busy"][reply["parent"]]
    steps = {
        "page": sent - state["event"],
        "to the kernel": busy - sent,
        "in the kernel": reply["kernel"] - busy,
        "back": reply["recv"] - reply["kernel"],
        "drawn": state["mutation"] - reply["recv"],
    }
    return ", ".join(f"{name} {ms:.0f}" for name, ms in steps.items()) + " ms"


def _drag(page: Page, slider: Locator) -> str:
    """Drag a slider's handle a third of its track, in several moves, then release it."""
    handle = slider.locator(".noUi-handle").first.bounding_box()
    track = slider.locator(".noUi-target").first.bounding_box()
    x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
    toward = 1 if x < track["x"] + track["width"] / 2 else -1
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, DRAG_MOVES + 1):
        page.mouse.move(x + toward * step * track["width"] / (3 * DRAG_MOVES), y, steps=2)
    page.mouse.up()
    return f"drag a slider over {DRAG_MOVES} positions, then release"


def _next_option(select: Locator) -> str:
    options = select.evaluate("(s) => [...s.options].map((o) => o.value)")
    current = select.input_value()
    choice = options[(options.index(current) + 1) % len(options)]
    select.select_option(choice)
    return f"dropdown {current!r} -> {choice!r}"


def _type_a_space(page: Page, box: Locator) -> str:
    """Type a space after the current text, which is sent on Enter only: a new value that the
    draw function parses as the old one, so the panel stays usable afterwards."""
    box.click()
    page.keyboard.press("End")
    page.keyboard.type(" ")
    return f"type a space after {box.input_value().strip()!r}"


def _enter(page: Page) -> str:
    page.keyboard.press("Enter")
    return "Enter"


def _type_a_refused_value(page: Page, box: Locator) -> str:
    """Type a word into a slider's value box: the panel must say it was refused (issue 38)."""
    box.click()
    page.keyboard.press("Control+a")
    page.keyboard.type("abc")
    return "type 'abc' in the slider's value box"


# A bare <input>, put in a panel's control row (where JupyterLab handles its clicks and keys as
# it does a widget's), that notes when it is clicked and when Enter is pressed in it.
_PLAIN_INPUT_JS = """(row) => {
  const input = Object.assign(document.createElement('input'), {id: 'course-plain-input'});
  const times = {};
  input.addEventListener('pointerdown', () => { times.start ??= performance.now(); });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') times.end = performance.now();
  });
  window.__coursePlain = times;
  row.appendChild(input);
}"""
_PLAIN_DONE_JS = """() => {
  document.getElementById('course-plain-input').remove();
  return window.__coursePlain.end - window.__coursePlain.start;
}"""


def plain_typing_ms(page: Page, row: Locator, text: str) -> float:
    """How long the page takes, now, from a click in a bare <input> in the panel's row to
    Enter after `text` is typed in it a key at a time: what typing costs on this machine in
    this notebook with no widget attached."""
    row.evaluate(_PLAIN_INPUT_JS)
    page.locator("#course-plain-input").click()
    page.keyboard.type(text)
    page.keyboard.press("Enter")
    return page.evaluate(_PLAIN_DONE_JS)


def _click_type_enter(page: Page, box: Locator, names: Iterator[str]) -> str:
    """A learner's whole entry: click the box, select its text, type a name a key at a time
    (each key waits until the page has handled it), press Enter."""
    name = next(names)
    box.click()
    page.keyboard.press("Control+a")
    page.keyboard.type(name)
    page.keyboard.press("Enter")
    return f"click, type {name!r} ({len(name)} keys), Enter"


def _label(control: Locator) -> str:
    label = control.locator(".widget-label")
    return label.first.inner_text().strip() if label.count() else "?"


def auto_interactions(page: Page, row: Locator) -> Iterator[Interaction]:
    """One interaction per control of a panel that redraws on change."""
    sliders = row.locator(".widget-slider, .widget-hslider").all()
    for slider in sliders:
        yield Interaction(_label(slider), lambda s=slider: move_slider(page, s))
    if sliders:  # issue 27: a drag redraws once, on release, and is timed from the release
        drag = partial(_drag, page, sliders[0])
        yield Interaction(_label(sliders[0]), drag, start_on=("pointerup",), figures=1)
    for dropdown in row.locator(".widget-dropdown").all():
        select = dropdown.locator("select")
        yield Interaction(_label(dropdown), lambda s=select: _next_option(s))
    for value_box in row.locator(".course-slider-value input").all():
        typing = partial(_type_a_refused_value, page, value_box)
        yield Interaction("a slider's value box", partial(_enter, page), typing)
    # a box with completion (its <input> has a list) is timed from the click, typing included
    for text in row.locator(".widget-text:not(.course-slider-value):not(:has(input[list]))").all():
        box = text.locator("input").first
        typing = partial(_type_a_space, page, box)
        yield Interaction(_label(text), partial(_enter, page), typing)
    for combo in row.locator(".widget-text:has(input[list])").all():
        entry = partial(_click_type_enter, page, combo.locator("input").first, cycle(TYPED_NAMES))
        plain = partial(plain_typing_ms, page, row, TYPED_NAMES[0])
        yield Interaction(
            _label(combo), entry, start_on=("pointerdown",), limit_ms=TYPED_LIMIT_MS, baseline=plain
        )
    for check in row.locator(".widget-checkbox").all():
        box = check.locator("input")
        yield Interaction(_label(check), lambda b=box: (b.click(), "checkbox click")[1])


def _setting_changes(row: Locator) -> list[Callable[[], str]]:
    """A button panel's settings a learner flips before pressing Run: checkboxes, then
    dropdowns (doing a change again undoes a checkbox's; a dropdown moves to its next option)."""
    changes: list[Callable[[], str]] = []
    for check in row.locator(".widget-checkbox input").all():
        changes.append(lambda b=check: (b.click(), "checkbox click")[1])
    for select in row.locator(".widget-dropdown select").all():
        changes.append(lambda s=select: _next_option(s))
    return changes[:MAX_SETTINGS_TRIED]


def button_interactions(row: Locator) -> Iterator[Interaction]:
    """A button panel: Run with the settings it already shows (a repeat: a note says so), then,
    per setting, change it and Run (a new case: its work starts), change it back and Run (a
    case already computed: it is redrawn). Only the click is timed: a changed setting has
    nothing to show but itself."""
    run = row.locator("button.mod-primary").first

    def click() -> str:
        run.click()
        return "click Run"

    yield Interaction("Run, settings unchanged", click)
    for change in _setting_changes(row):
        yield Interaction("Run, a setting changed", click, change)
        yield Interaction("Run, the setting changed back", click, change)


def panel_interactions(page: Page, panel: Locator) -> list[Interaction]:
    """Every interaction the test times on one panel, in a learner's order."""
    panel.scroll_into_view_if_needed()
    row = panel.locator(":scope > .widget-hbox").first
    if row.locator("button.mod-primary").count():
        return list(button_interactions(row))
    return list(auto_interactions(page, row))
