"""One whole widget session with the keyboard alone, in JupyterLab (issue 27).

A learner who cannot use a mouse must be able to reach every control of a course panel with Tab
and Shift+Tab, change it with Space or the arrow keys, press its button with Enter or Space, see
where the focus is, and hear a name for every control. The switchboard of notebook 03 has every
kind of control a course panel uses with a button (two checkboxes, a slider, Run), and its Run
trains: the test drives it with `page.keyboard` only (no click, no `.fill`, no `.check`) and
checks that what the panel shows follows each key. Focus starts on the panel itself, as where a
learner who read down the notebook arrives; only the imports and the panel's own cell run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

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

NOTEBOOK = "03_inside_adam.ipynb"
PANEL_CELL = "switchboard.switchboard()"
PANEL_TITLE = "Per-op bug switchboard"
MAX_TABS = 12  # presses allowed to reach the next control (the panel has five stops)

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
    """Press `key` on the focused button; wait until the panel shows something new and the
    kernel is quiet; returns the panel's text."""
    before = panel_state(keys.panel)
    keys.press(key)
    assert wait_for_change(keys.page, keys.panel, before), f"{key} on Run changed nothing"
    wait_until_quiet(keys.page)
    return keys.panel.inner_text()


def test_a_whole_switchboard_session_with_the_keyboard_alone(lab, browser):
    if not (NOTEBOOK_SRC / NOTEBOOK).exists():
        pytest.skip(f"{NOTEBOOK} is not written yet")
    path = f"notebooks/{NOTEBOOK}"
    lab.start_kernel_for(path)
    page = browser.new_page()
    try:
        open_notebook(page, lab.lab_url(path, workspace="keyboard"))
        errors = run_cells(page, [PANEL_CELL])
        assert not errors, f"{NOTEBOOK}: {errors}"
        wait_for_widgets(page)
        panel = page.locator(".course-panel", has_text=PANEL_TITLE)
        assert panel.count() == 1, f"{NOTEBOOK} shows no {PANEL_TITLE!r} panel"
        panel.evaluate("(p) => { p.tabIndex = -1; p.focus(); }")  # arrive at the panel
        panel.evaluate(_REMEMBER_JS)
        keys = Keyboard(page, panel)
        _session(keys)
        assert not errors_shown(page) and not panel_errors(panel), panel_errors(panel)
        unnamed = [stop.describe() for stop in keys.stops if not stop.name.strip()]
        assert not unnamed, f"controls a screen reader cannot name: {unnamed}"
        unmarked = [stop.describe() for stop in keys.stops if not stop.marked]
        assert not unmarked, f"focus not shown on: {unmarked}"
    finally:
        page.close()
        lab.stop_kernel_for(path)


def _session(keys: Keyboard) -> None:
    """Fix addcmul_, take one step off, Run (Enter); step back, Run (Space); Run again: the
    repeat is said, not silently ignored."""
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
