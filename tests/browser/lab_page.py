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
RUN_ALL_TIMEOUT_S = 300  # the slowest notebook runs in ~90 s under nbclient on 2 cores
NO_START_S = 30  # Run All that has not started a single cell by then was lost: retry once
STALL_S = 10  # idle kernel, nothing queued, cells unrun: Run All stopped
WIDGET_TIMEOUT_S = 30
REDRAW_TIMEOUT_S = 60
IDLE_AFTER_MOVE_S = 2  # kernel idle this long after a move and nothing changed: it drew the same
MAX_OPTIONS = 4  # dropdown options tried per dropdown

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
    extension JupyterLab shows the text fallback ("Interactive widget (...): run this cell") instead, so counting the views
    against the stored notebook catches a missing extension."""
    problems = []
    for text in ("Loading widget...", "Error displaying widget"):
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


def _wait_for_change(page: Page, panel: Locator, before: str) -> bool:
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


def _move_slider(page: Page, slider: Locator) -> str:
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
        yield lambda s=slider: _move_slider(page, s)
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
        if _wait_for_change(page, panel, before):
            return done
        tried.append(done)
    if not tried:
        return None
    raise AssertionError(f"no control changed the panel's figure or text (tried: {tried})")


def screenshot_name(notebook: str) -> str:
    """build/screenshots/NN_name.png for notebooks/NN_name.ipynb."""
    return re.sub(r"\.ipynb$", ".png", notebook)
