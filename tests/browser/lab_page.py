"""Driving one notebook in JupyterLab the way a learner does: open it, Run All, use its widget.

The page is read through the DOM a learner sees (outputs, rendered widgets, the figure's <img>)
and JupyterLab's own command registry (`window.jupyterapp`, exposed by the server flag
`--LabApp.expose_app_in_browser`), which runs exactly what the Run menu runs.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `make test` collects this folder without needing playwright
    from playwright.sync_api import Locator, Page

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
ERROR_OUTPUTS = ".jp-OutputArea-output[data-mime-type*='error']"
# JupyterLab paints stderr as a pink box that reads as an error (issue 27: progress went there)
STDERR_OUTPUTS = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
RUN_ALL_TIMEOUT_S = 300  # the slowest notebook runs in ~90 s under nbclient on 2 cores
NO_START_S = 30  # Run All that has not started a single cell by then was lost: retry once
STALL_S = 10  # idle kernel, nothing queued, cells unrun: Run All stopped
WIDGET_TIMEOUT_S = 30
REDRAW_TIMEOUT_S = 60
IDLE_AFTER_MOVE_S = 2  # kernel idle this long after a move and nothing changed: it drew the same
MAX_OPTIONS = 4  # dropdown options tried per dropdown
QUIET_S = 1.0  # the kernel idle this long after a click: every queued message has been handled
FIT_SLACK_PX = 1  # sub-pixel rounding, not an overflow
ERROR_COLOUR = "rgb(176, 0, 32)"  # course.ui.message_html's error border (#b00020)
# What the course wrote, inside JupyterLab: rendered markdown, cell outputs (course panels
# included). Everything else -- menus, toolbars, prompts, the code editor's theme -- is
# JupyterLab's own interface, which the course cannot change.
COURSE_CONTENT = ".jp-MarkdownOutput, .jp-OutputArea-output, .course-panel"

# Waits for the opened notebook's kernel to answer kernel_info; resolves to its id.
_KERNEL_READY_JS = """async (timeoutMs) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const work = (async () => {
    const app = window.jupyterapp;
    while (!app.shell.currentWidget || !app.shell.currentWidget.sessionContext) await sleep(100);
    const panel = app.shell.currentWidget;
    await panel.context.ready;
    await panel.sessionContext.ready;
    while (!panel.sessionContext.session?.kernel) await sleep(100);
    const kernel = panel.sessionContext.session.kernel;
    await kernel.info;
    return kernel.id;
  })();
  const timeout = sleep(timeoutMs).then(() => { throw new Error('kernel not ready'); });
  return Promise.race([work, timeout]);
}"""

# Clears outputs and execution counts (stored counts would look like a finished run), then
# starts Run All without awaiting it: progress is polled from Python.
_RUN_ALL_JS = """async () => {
  const app = window.jupyterapp;
  const notebook = app.shell.currentWidget.content;
  await app.commands.execute('notebook:clear-all-cell-outputs');
  for (const cell of notebook.widgets) {
    if (cell.model.type === 'code') cell.model.executionCount = null;
  }
  app.commands.execute('notebook:run-all-cells');
}"""

# Progress of Run All: execution counts of the non-blank code cells, cells still queued or
# running, the kernel's status and the error outputs in the notebook's model.
_PROGRESS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.widgets.filter(
    (c) => c.model.type === 'code' && c.model.sharedModel.getSource().trim() !== '');
  return {
    counts: cells.map((c) => c.model.executionCount),
    pending: cells.filter((c) => (c.promptNode?.textContent || '').includes('*')).length,
    status: panel.sessionContext.kernelDisplayStatus,
    errors: cells.flatMap((c) => c.model.outputs.toJSON())
      .filter((o) => o.output_type === 'error').map((o) => `${o.ename}: ${o.evalue}`),
  };
}"""

# What a panel displays: its figure's src (a new blob URL whenever the PNG bytes change) and the
# HTML of its text area (the panel's last child). The message box is left out on purpose.
_PANEL_STATE_JS = """(panel) => {
  const images = [...panel.querySelectorAll('img')].map((i) => i.src).join('|');
  const texts = [...panel.children].filter((c) => c.classList.contains('widget-html'));
  const text = texts.length ? texts[texts.length - 1].innerHTML : '';
  return images + '\\n' + text;
}"""


# Elements inside a course panel wider than the notebook's cell area. The cell area is the
# output area the panel is drawn in (`.jp-OutputArea-output`, sized by the notebook, not by its
# content; it scrolls when something overflows). An element inside a scroll box of the panel's
# own (overflow-x auto/scroll, e.g. html_table's wrapper) fits if the box fits. Only the
# outermost offender of each subtree is listed.
_OVERFLOW_JS = """(panel, slack) => {
  const area = panel.closest('.jp-OutputArea-output') || panel.parentElement;
  const box = area.getBoundingClientRect();
  const left = box.left + area.clientLeft, right = left + area.clientWidth;
  const inScrollBox = (el) => {
    for (let a = el.parentElement; a && a !== panel; a = a.parentElement) {
      if (['auto', 'scroll'].includes(getComputedStyle(a).overflowX)) return true;
    }
    return false;
  };
  const name = (el) => el.tagName.toLowerCase()
    + [...el.classList].slice(0, 2).map((c) => '.' + c).join('');
  const found = [];
  for (const el of [panel, ...panel.querySelectorAll('*')]) {
    const r = el.getBoundingClientRect();
    if (!r.width || inScrollBox(el)) continue;
    if (found.some((f) => f.el.contains(el))) continue;
    const wide = r.width > area.clientWidth + slack;
    const out = r.right > right + slack || r.left < left - slack;
    if (wide || out) found.push({el, what: name(el), width: Math.round(r.width)});
  }
  return {
    cell_width: area.clientWidth,
    scroll_width: area.scrollWidth,
    offenders: found.map(({what, width}) => ({what, width})),
  };
}"""

# The panel's own error message (course.ui.message_html with kind "error"), if it shows one.
_PANEL_ERROR_JS = """(panel, colour) => [...panel.querySelectorAll('div')]
  .filter((d) => getComputedStyle(d).borderLeftColor === colour
    && parseFloat(getComputedStyle(d).borderLeftWidth) >= 3 && d.offsetParent !== null)
  .map((d) => d.innerText.trim())"""

# How a panel is named in reports: its bold title (up to a colon), else its controls' labels.
_PANEL_NAME_JS = """(panel) => {
  const title = panel.querySelector(':scope > .widget-html b');
  if (title) return title.innerText.trim().split(':')[0].slice(0, 60);
  const labels = [...panel.querySelectorAll('.widget-label')].map((l) => l.innerText.trim());
  return 'panel(' + labels.filter(Boolean).join(', ') + ')';
}"""

# What the opened notebook shows before anything ran: outputs in the model and in the DOM, and
# code cells with an execution count.
_STORED_OUTPUTS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const code = panel.content.widgets.filter((c) => c.model.type === 'code');
  return {
    outputs: code.filter((c) => c.model.outputs.length).length,
    counted: code.filter((c) => c.model.executionCount !== null).length,
    shown: panel.node.querySelectorAll('.jp-OutputArea-output').length,
  };
}"""


@dataclass
class Fit:
    """One panel's measured fit: the cell area's width and what is wider than it."""

    panel: str
    cell_width: int
    scroll_width: int
    offenders: list[dict]

    def describe(self, notebook: str, when: str) -> str:
        worst = max(o["width"] for o in self.offenders)
        parts = ", ".join(f"{o['what']} {o['width']} px" for o in self.offenders[:4])
        return (
            f"{notebook} / {self.panel} ({when}): {worst} px wide in a {self.cell_width} px "
            f"cell area: {parts}"
        )


@dataclass
class RunReport:
    """How Run All went: seconds it took, whether the retry was needed, cells left unrun."""

    seconds: float
    retried: bool
    unrun: int


def open_notebook(page: Page, url: str) -> None:
    """Load JupyterLab on one notebook and wait until its kernel answers."""
    page.goto(url)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
    page.evaluate(_KERNEL_READY_JS, 90_000)


def run_all(page: Page) -> RunReport:
    """Run All, wait until every code cell has run (or one failed), retrying once if lost."""
    start = time.monotonic()
    page.evaluate(_RUN_ALL_JS)
    retried, quiet_since = False, None
    while True:
        progress = page.evaluate(_PROGRESS_JS)
        counts = progress["counts"]
        unrun = sum(1 for c in counts if c is None)
        if progress["errors"] or page.locator(ERROR_OUTPUTS).count():
            break  # JupyterLab stops Run All at the first error: nothing more will run
        idle = progress["status"] == "idle" and not progress["pending"]
        if idle and not unrun:
            break
        now = time.monotonic()
        if idle and unrun < len(counts):  # some cells ran, the rest are not queued
            quiet_since = quiet_since or now
            if now - quiet_since > STALL_S:
                break
        else:
            quiet_since = None
        if unrun == len(counts) and not progress["pending"] and now - start > NO_START_S:
            if retried:
                break
            page.evaluate(_RUN_ALL_JS)  # FIELD_NOTES: a Run All right after load can be lost
            retried, start = True, now
        if now - start > RUN_ALL_TIMEOUT_S:
            raise AssertionError(f"Run All not finished after {RUN_ALL_TIMEOUT_S} s: {progress}")
        time.sleep(0.5)
    return RunReport(time.monotonic() - start, retried, unrun)


def errors_shown(page: Page) -> list[str]:
    """Every error output (as stored in the notebook's model and as shown), plus any output that
    prints a Python traceback."""
    found = list(page.evaluate(_PROGRESS_JS)["errors"])
    found += [e.inner_text()[:2000] for e in page.locator(ERROR_OUTPUTS).all()]
    for output in page.locator(".jp-OutputArea-output").all():
        text = output.inner_text()
        if "Traceback" in text and text[:2000] not in found:
            found.append(text[:2000])
    return found


def stderr_shown(page: Page) -> list[str]:
    """The text of every output written to stderr."""
    return [e.inner_text()[:500] for e in page.locator(STDERR_OUTPUTS).all()]


# The notebook's own scroller and each output area: wider content than box means a sideways
# scrollbar (a table or a panel inside its own overflow-x box is allowed to scroll there).
_SIDEWAYS_JS = """(slack) => {
  const boxes = [...document.querySelectorAll(
    '.jp-NotebookPanel-notebook, .jp-WindowedPanel-outer, .jp-OutputArea-output')];
  if (!boxes.some((b) => b.matches('.jp-OutputArea-output'))) return ['no output area to measure'];
  return boxes.filter((b) => b.offsetParent && b.scrollWidth > b.clientWidth + slack)
    .map((b) => `${b.className.split(' ')[0]}: ${b.scrollWidth} px in ${b.clientWidth} px`
      + ` (${(b.innerText || '').trim().slice(0, 60)})`);
}"""


def sideways_scroll(page: Page) -> list[str]:
    """Every box of the notebook that scrolls sideways at the test's screen size."""
    return page.evaluate(_SIDEWAYS_JS, FIT_SLACK_PX)


def _outputs_saying(page: Page, text: str) -> Locator:
    return page.locator(".jp-OutputArea-output", has_text=text)  # markdown may mention it too


def wait_for_widgets(page: Page) -> None:
    """Wait until no output says "Loading widget..." (the manager has drawn every view)."""
    deadline = time.monotonic() + WIDGET_TIMEOUT_S
    while _outputs_saying(page, "Loading widget...").count() and time.monotonic() < deadline:
        time.sleep(0.25)


def widget_problems(page: Page, expected_views: int) -> list[str]:
    """What is wrong with the widgets on the page: views not drawn, or fewer than stored.

    A drawn view is an output whose root is a `.jupyter-widgets` element; without the widget lab
    extension JupyterLab shows the text fallback ("Interactive widget (...): run this cell")
    instead, so counting the views against the stored notebook catches a missing extension."""
    problems = []
    # the last: ipywidgets' view of a widget whose JavaScript failed (a broken-file icon)
    for text in ("Loading widget...", "Error displaying widget", "Click to show javascript error"):
        if _outputs_saying(page, text).count():
            problems.append(f"an output shows {text!r}")
    views = page.locator(".jp-OutputArea-output > .jupyter-widgets").count()
    if views < expected_views:
        problems.append(
            f"{views} widget views drawn, the stored notebook has {expected_views}"
            " (is the ipywidgets lab extension installed in this environment?)"
        )
    return problems


def panel_state(panel: Locator) -> str:
    """The figure and text a course panel displays right now."""
    return panel.evaluate(_PANEL_STATE_JS)


def wait_for_change(page: Page, panel: Locator, before: str) -> bool:
    """True once the display differs; False when it has not changed and the kernel has been
    idle for a while (the redraw ran and drew the same), or after REDRAW_TIMEOUT_S."""
    start = time.monotonic()
    idle_since = None
    while time.monotonic() - start < REDRAW_TIMEOUT_S:
        if panel_state(panel) != before:
            return True
        now = time.monotonic()
        if page.evaluate(_PROGRESS_JS)["status"] == "idle":
            idle_since = idle_since or now
            if now - idle_since > IDLE_AFTER_MOVE_S and now - start > 2 * IDLE_AFTER_MOVE_S:
                return False
        else:
            idle_since = None
        time.sleep(0.25)
    return False


def move_slider(page: Page, slider: Locator) -> str:
    """Press an arrow key on a slider's handle, away from the end it is at: the value changes."""
    handle = slider.locator(".noUi-handle").first
    at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
    key = "ArrowLeft" if at_max else "ArrowRight"
    handle.focus()
    page.keyboard.press(key)
    return f"slider {key}"


def _pick_option(select: Locator, value: str) -> str:
    current = select.input_value()
    if value == current:
        return ""
    select.select_option(value)
    return f"dropdown {current!r} -> {value!r}"


def _click_unselected(toggles: Locator) -> str:
    for button in toggles.locator("button").all():
        if "mod-active" not in (button.get_attribute("class") or ""):
            button.click()
            return f"toggle {button.inner_text()!r}"
    return ""


def _control_moves(page: Page, row: Locator):
    """Yield one callable per control in the panel's control row, in the order shown."""
    for slider in row.locator(".widget-slider").all():
        yield lambda s=slider: move_slider(page, s)
    for select in row.locator(".widget-dropdown select").all():
        options = select.evaluate("(s) => [...s.options].map((o) => o.value)")
        for value in options[:MAX_OPTIONS]:  # two options may draw the same (a lesson, even)
            yield lambda s=select, v=value: _pick_option(s, v)
    for toggles in row.locator(".widget-toggle-buttons").all():
        yield lambda t=toggles: _click_unselected(t)
    for box in row.locator(".widget-checkbox input").all():
        yield lambda b=box: (b.click(), "checkbox")[1]
    for number in row.locator(".widget-text input[type='number']").all():
        yield lambda n=number: _step_number(page, n)


def _step_number(page: Page, number: Locator) -> str:
    number.focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")  # IntText/FloatText send their value on Enter
    return "number ArrowUp"


def move_a_control(page: Page, panel: Locator) -> str | None:
    """Move the panel's controls one at a time (pressing its Run button after each, if it has
    one) until the figure or text changes; returns which move did it (None when the panel has
    no control this can move), or raises when moves were made and nothing changed."""
    panel.scroll_into_view_if_needed()
    row = panel.locator(".widget-hbox").first
    run_button = row.locator("button.mod-primary")
    tried = []
    for move in _control_moves(page, row):
        before = panel_state(panel)
        done = move()
        if not done:
            continue
        if run_button.count():
            run_button.first.click()
        if wait_for_change(page, panel, before):
            return done
        tried.append(done)
    if not tried:
        return None
    raise AssertionError(f"no control changed the panel's figure or text (tried: {tried})")


# For each axe target (a CSS selector), whether its element lies inside the course's content
# (null: no element matches it, e.g. one inside a shadow root).
_IN_COURSE_JS = """([targets, content]) => targets.map((t) => {
  const el = document.querySelector(t);
  return el ? !!el.closest(content) : null;
})"""


def in_course_content(page: Page, targets: list[str]) -> dict[str, bool]:
    """Which of axe's targets are part of the course's content (COURSE_CONTENT). A target
    that cannot be placed counts as the course's: a finding is never waved off unseen."""
    inside = page.evaluate(_IN_COURSE_JS, [targets, COURSE_CONTENT])
    return {target: found is not False for target, found in zip(targets, inside, strict=True)}


def screenshot_name(notebook: str) -> str:
    """build/screenshots/NN_name.png for notebooks/NN_name.ipynb."""
    return re.sub(r"\.ipynb$", ".png", notebook)


def panel_name(panel: Locator) -> str:
    """A panel's title (or its control labels), for reports."""
    return panel.evaluate(_PANEL_NAME_JS)


def panel_fit(panel: Locator) -> Fit:
    """Measure whether everything inside the panel fits the notebook's cell area."""
    found = panel.evaluate(_OVERFLOW_JS, FIT_SLACK_PX)
    return Fit(panel_name(panel), found["cell_width"], found["scroll_width"], found["offenders"])


def overflows(page: Page, notebook: str, when: str) -> list[str]:
    """One line per course panel on the page that is wider than the cell area."""
    fits = [panel_fit(p) for p in page.locator(".course-panel").all()]
    return [fit.describe(notebook, when) for fit in fits if fit.offenders]


def panel_errors(panel: Locator) -> list[str]:
    """The error messages the panel shows (a draw function that raised)."""
    return panel.evaluate(_PANEL_ERROR_JS, ERROR_COLOUR)


def stored_outputs(page: Page) -> dict[str, int]:
    """Code cells with outputs or execution counts, and outputs drawn, as the page opened."""
    return page.evaluate(_STORED_OUTPUTS_JS)


def wait_until_quiet(page: Page, timeout_s: float = REDRAW_TIMEOUT_S) -> None:
    """Wait until the kernel has been idle for QUIET_S (every click handled)."""
    start, idle_since = time.monotonic(), None
    while time.monotonic() - start < timeout_s:
        if page.evaluate(_PROGRESS_JS)["status"] == "idle":
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= QUIET_S:
                return
        else:
            idle_since = None
        time.sleep(0.2)
    raise AssertionError(f"the kernel was still busy {timeout_s} s after a click")


def _preferred_move(page: Page, row: Locator):
    """The control a learner reaches for first: a slider labelled 'step(s)' (the switchboard's
    'move the steps slider, then Run'), else the first control that moves."""
    for slider in row.locator(".widget-slider").all():
        if re.search(r"step", slider.locator(".widget-label").first.inner_text(), re.I):
            return lambda s=slider: move_slider(page, s)
    return next(iter(_control_moves(page, row)), None)


def change_then_double_click(page: Page, panel: Locator) -> str:
    """Move one control, then double-click the panel's Run button: the first click runs, the
    second arrives with the same settings. Returns what was done; waits until both are handled."""
    panel.scroll_into_view_if_needed()
    row = panel.locator(".widget-hbox").first
    move = _preferred_move(page, row)
    done = (move() if move else "") or "no control moved"
    before = panel_state(panel)
    panel.locator("button.mod-primary").first.dblclick()
    wait_for_change(page, panel, before)
    wait_until_quiet(page)
    noted = "Same settings" in panel.inner_text()  # course.ui.Panel.click's repeated-click note
    return f"{done}, then double-click Run ({'repeat noted' if noted else 'no repeat note'})"
