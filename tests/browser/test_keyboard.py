"""Whole widget sessions with the keyboard alone, in JupyterLab (issue 27).

A learner who cannot use a mouse must be able to reach every control of a course panel with Tab
and Shift+Tab, change it with Space, the arrow keys or by typing, press its button with Enter or
Space, see where the focus is, and hear a name for every control. Two panels cover every kind of
control the course uses: notebook 03's switchboard (two checkboxes, a slider, a Run button that
trains) and notebook 05's dispatch explorer (a text box with completion, a dropdown). Each is
driven with `page.keyboard` only (no click, no `.fill`, no `.check`), and what the panel shows
must follow each key. The focus starts on the panel itself, where a learner who read down the
notebook arrives; only the imports and the panel's own cell run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from course.ui import COMPLETIONS
from tests.browser.conftest import NOTEBOOK_SRC
from tests.browser.lab_page import (
    errors_shown,
    open_notebook,
    panel_errors,
    panel_state,
    wait_for_change,
    wait_for_widgets,
    wait_until_quiet,
)
from tests.browser.response import run_cells

pytestmark = pytest.mark.browser

MAX_TABS = 12  # presses allowed to reach the next control (a panel has at most five stops)

# How an element looks where a focus mark would show (outline, shadow, border, fill).
_LOOK = """(el) => { const s = getComputedStyle(el);
  return [s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow, s.borderColor,
          s.backgroundColor].join('|'); }"""
# Remember how every element of the panel looks without the focus (as a JS property, the DOM
# is left alone), so a focused control can be compared with itself.
_REMEMBER_JS = f"""(panel) => {{ const look = {_LOOK};
  for (const el of panel.querySelectorAll('*')) el.__courseUnfocused = look(el); }}"""
# The focused element, if it lies in the panel: its markup, its state, and whether the focus
# shows: an outline or a shadow, or it looks different from the same element unfocused (a
# slider's handle fills with the theme's colour).
_FOCUSED_JS = f"""(panel) => {{
  const el = document.activeElement;
  if (!el || !panel.contains(el)) return null;
  const look = {_LOOK};
  const style = getComputedStyle(el);
  const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0)
    || style.boxShadow !== 'none';
  return {{
    html: el.outerHTML.slice(0, 120),
    checked: el.type === 'checkbox' ? el.checked : null,
    valuenow: el.getAttribute('aria-valuenow'),
    marked: ring || (el.__courseUnfocused !== undefined && look(el) !== el.__courseUnfocused),
  }};
}}"""

# The accessible name and role, as Chromium's accessibility tree has them: "- role "name" ...".
_SNAPSHOT_LINE = re.compile(r'^- (?P<role>[\w-]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?')


@dataclass
class Stop:
    """One place Tab landed in the panel."""

    role: str
    name: str
    html: str
    checked: bool | None
    valuenow: str | None
    marked: bool

    def describe(self) -> str:
        return f"{self.role} {self.name!r} ({self.html[:60]})"


def _focused(page, panel) -> Stop | None:
    found = panel.evaluate(_FOCUSED_JS)
    if found is None:
        return None
    snapshot = page.locator(":focus").aria_snapshot().splitlines()[0]
    match = _SNAPSHOT_LINE.match(snapshot.strip())
    role, name = (match["role"], match["name"] or "") if match else (snapshot, "")
    return Stop(role, name, found["html"], found["checked"], found["valuenow"], found["marked"])


class Keyboard:
    """Tab through one panel with the keyboard, remembering every stop (for the label check)."""

    def __init__(self, page, panel) -> None:
        self.page, self.panel = page, panel
        self.stops: list[Stop] = []

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)

    def tab_to(self, role: str, name: str = "", backwards: bool = False) -> Stop:
        """Press Tab (Shift+Tab) until the focus is on a control of `role` whose name starts
        with `name`; fails if the focus leaves the panel or never gets there."""
        for _ in range(MAX_TABS):
            self.press("Shift+Tab" if backwards else "Tab")
            stop = _focused(self.page, self.panel)
            assert stop is not None, f"the focus left the panel looking for {role} {name!r}"
            self.stops.append(stop)
            if stop.role == role and stop.name.startswith(name):
                return stop
        raise AssertionError(f"{MAX_TABS} tabs never reached {role} {name!r}: {self.stops}")

    def now(self) -> Stop:
        stop = _focused(self.page, self.panel)
        assert stop is not None, "the focus left the panel"
        return stop


def _press_and_wait(keys: Keyboard, key: str) -> str:
    """Press `key` on the focused control; wait until the panel shows something new and the
    kernel is quiet; returns the panel's text."""
    before = panel_state(keys.panel)
    keys.press(key)
    assert wait_for_change(keys.page, keys.panel, before), f"{key} changed nothing in the panel"
    wait_until_quiet(keys.page)
    return keys.panel.inner_text()


def _switchboard(keys: Keyboard) -> None:
    """Notebook 03's switchboard (checkboxes, a slider, Run): fix addcmul_, take one step off,
    Run (Enter); step back, Run (Space); Run again: the repeat is said, not silently ignored.
    Run is disabled while it trains: the focus must come back to it."""
    box = keys.tab_to("checkbox", "addcmul_")
    keys.press("Space")
    assert keys.now().checked is (not box.checked), "Space did not toggle the checkbox"
    slider = keys.tab_to("slider", "steps")
    steps = int(float(slider.valuenow))
    keys.press("ArrowLeft")
    assert float(keys.now().valuenow) == steps - 1, "ArrowLeft did not move the slider"
    keys.tab_to("button", "Run")
    text = _press_and_wait(keys, "Enter")
    assert "addcdiv_ only" in text and f"at {steps - 1} steps" in text, text

    keys.tab_to("slider", "steps", backwards=True)
    keys.press("ArrowRight")
    keys.tab_to("button", "Run")
    text = _press_and_wait(keys, "Space")
    assert "addcdiv_ only" in text and f"at {steps} steps" in text, text
    still = _focused(keys.page, keys.panel)
    where = keys.page.evaluate("() => document.activeElement?.outerHTML.slice(0, 120)")
    assert still is not None and still.role == "button", f"after Run the focus is on {where}"
    keys.press("Enter")
    wait_until_quiet(keys.page)
    assert "Same settings" in keys.panel.inner_text(), "a repeated Run said nothing"


# The names the focused box's list offers (its <datalist>'s options).
_OFFERED_JS = "() => [...(document.activeElement.list?.options || [])].map((o) => o.value)"


def _dispatch_explorer(keys: Keyboard) -> None:
    """Notebook 05's dispatch explorer (a text box with completion, a dropdown; no button):
    type another op and press Enter, then pick the next tensor with the down arrow. The box's
    list follows the keys, and stays short (issue 38: all 2,584 ops made every key slow)."""
    box = keys.tab_to("combobox", "op")
    typed = keys.page.evaluate("() => document.activeElement.value")
    keys.press("End")
    for _ in typed:
        keys.press("Backspace")
    keys.page.keyboard.type("addcdiv_")
    offered = keys.page.evaluate(_OFFERED_JS)
    assert offered and len(offered) <= COMPLETIONS, f"the box's list holds {len(offered)} names"
    assert offered[0] == "addcdiv_" and all("addcdiv_" in name for name in offered), offered
    text = _press_and_wait(keys, "Enter")
    assert "addcdiv_(Tensor" in text, f"{box.describe()}: Enter did not show addcdiv_: {text}"
    keys.tab_to("combobox", "tensor")
    before = keys.page.evaluate("() => document.activeElement.value")
    _press_and_wait(keys, "ArrowDown")
    after = keys.page.evaluate("() => document.activeElement.value")
    assert after != before, "the down arrow did not pick another tensor"


@dataclass(frozen=True)
class Session:
    """A panel driven by the keyboard: its notebook, a snippet of the cell that builds it, its
    title, and what the learner does."""

    notebook: str
    cell: str
    title: str
    drive: Callable[[Keyboard], None]


SESSIONS = {
    "switchboard": Session(
        "03_inside_adam.ipynb", "switchboard.switchboard()", "Per-op bug switchboard", _switchboard
    ),
    "dispatch explorer": Session(
        "05_dispatch.ipynb", "dispatch_explorer(", "Dispatch explorer", _dispatch_explorer
    ),
}


@pytest.mark.parametrize("name", SESSIONS)
def test_a_whole_widget_session_with_the_keyboard_alone(name, lab, browser):
    session = SESSIONS[name]
    if not (NOTEBOOK_SRC / session.notebook).exists():
        pytest.skip(f"{session.notebook} is not written yet")
    path = f"notebooks/{session.notebook}"
    lab.start_kernel_for(path)
    page = browser.new_page()
    try:
        open_notebook(page, lab.lab_url(path, workspace="keyboard-" + name.replace(" ", "-")))
        errors = run_cells(page, [session.cell])
        assert not errors, f"{session.notebook}: {errors}"
        wait_for_widgets(page)
        panel = page.locator(".course-panel", has_text=session.title)
        assert panel.count() == 1, f"{session.notebook} shows no {session.title!r} panel"
        panel.evaluate("(p) => { p.tabIndex = -1; p.focus(); }")  # arrive at the panel
        panel.evaluate(_REMEMBER_JS)
        keys = Keyboard(page, panel)
        session.drive(keys)
        assert not errors_shown(page) and not panel_errors(panel), panel_errors(panel)
        unnamed = [stop.describe() for stop in keys.stops if not stop.name.strip()]
        assert not unnamed, f"controls a screen reader cannot name: {unnamed}"
        unmarked = [stop.describe() for stop in keys.stops if not stop.marked]
        assert not unmarked, f"focus not shown on: {unmarked}"
    finally:
        page.close()
        lab.stop_kernel_for(path)
