"""Every interaction with a course panel shows a change or a status within 200 ms (issue 27).

The slow panels are opened in JupyterLab in headless Chromium, as a learner has them: the
bias-correction sliders and the switchboard (03), the stride explorer (04), the dispatch
explorer (05) and the layout auditor (08). Only the cells that build them run (see
tests/browser/response.py), not Run All: about two minutes on an idle 2-core machine, three and a
half under load. Left out for time: 01's sweep (building it trains 120 steps first; its Train
button takes the switchboard's path, Panel.click then `working`), and the fast panels of 00 and
06 (the same Panel.redraw path as the explorers).

Each control of a panel that redraws on change is moved once (a slider's arrow key, a dropdown's
next option, Enter after typing in a box, Enter after a word typed in a slider's value box: the
panel must say it refused it), a box with completion (05's op box) is clicked, typed in and
Enter pressed, all timed from the click (issue 38: response.TYPED_LIMIT_MS), and one slider is
dragged: timed from its release, the drag must draw exactly one new figure (a slider reporting
every position would queue a full redraw per position; issue 27). A panel with a Run button is
clicked with its settings unchanged (a note says so), after a setting changed (new work starts)
and after it changed back (a case already computed is redrawn).

The clock runs in the browser: from the input event Playwright dispatches to the first change in
the panel's status, message, figure or text (never the control row, which a control's own new
value changes at once). A status counts: the panel writes one before any slow work. Noise on a
loaded 2-core machine: every interaction is asserted, but one that misses 200 ms is tried once
more (a fresh move of the same control, or the same click) and the retry must meet it; both
attempts are reported. The terminal summary lists every time with where it went (page, to the
kernel, in it, back, drawn), and the median and the max per panel.
"""

from __future__ import annotations

import time

import pytest

from tests.browser.conftest import NOTEBOOK_SRC
from tests.browser.lab_page import (
    errors_shown,
    open_notebook,
    panel_errors,
    panel_name,
    wait_for_widgets,
)
from tests.browser.response import (
    Response,
    ResponseReport,
    measure,
    panel_interactions,
    run_cells,
)

pytestmark = pytest.mark.browser

# notebook -> the source of each cell that builds one of its panels (the first code cell, the
# imports, always runs too)
PANELS = {
    "03_inside_adam.ipynb": ["bias_correction_widget()", "switchboard.switchboard()"],
    "04_strides.ipynb": ["explore()"],
    "05_dispatch.ipynb": ["dispatch_explorer("],
    "08_pattern_strikes_again.ipynb": ["audit_panel("],
}

_REPORT = ResponseReport()


@pytest.fixture(scope="module")
def responses(request: pytest.FixtureRequest) -> ResponseReport:
    """The module's measurements; the report prints them after the run."""
    plugins = request.config.pluginmanager
    if not plugins.is_registered(_REPORT):
        plugins.register(_REPORT, "course-panel-responses")
    return _REPORT


def _drive(page, panel, title: str) -> tuple[list[Response], list[Response]]:
    """Time every interaction of one panel, retrying a miss once; returns every attempt, and
    the one that counts per interaction (the retry, where there was one)."""
    attempts, counted = [], []
    for interaction in panel_interactions(page, panel):
        response = measure(page, panel, title, interaction)
        attempts.append(response)
        if response.missed:
            response = measure(page, panel, title, interaction, retry=True)
            attempts.append(response)
        counted.append(response)
    return attempts, counted


@pytest.mark.parametrize("name", list(PANELS))
def test_each_interaction_shows_a_response_within_200_ms(name, lab, browser, responses):
    if not (NOTEBOOK_SRC / name).exists():
        pytest.skip(f"notebooks/{name} is not written yet")
    path = f"notebooks/{name}"
    started = time.perf_counter()
    lab.start_kernel_for(path)
    page = browser.new_page()
    try:
        open_notebook(page, lab.lab_url(path, workspace="response-" + name.split("_")[0]))
        errors = run_cells(page, PANELS[name])
        assert not errors, f"{name}: building its panels failed:\n" + "\n".join(errors)
        wait_for_widgets(page)
        built = time.perf_counter() - started
        panels = page.locator(".course-panel")
        assert panels.count() == len(PANELS[name]), (
            f"{name}: {panels.count()} course panels drawn, expected {len(PANELS[name])}"
        )
        counted: list[Response] = []
        problems: list[str] = []
        for panel in panels.all():
            title = panel_name(panel)
            attempts, last_words = _drive(page, panel, title)
            assert attempts, f"{name} / {title}: no interaction to time"
            responses.responses += attempts
            counted += last_words
            problems += [f"{title} shows an error: {e}" for e in panel_errors(panel)]
        problems += errors_shown(page)
        responses.seconds[path] = (built, time.perf_counter() - started)
    finally:
        page.close()
        lab.stop_kernel_for(path)
    slow = [r.describe() for r in counted if r.missed]
    redrawn = [r.describe() for r in counted if not r.redrew_as_expected]
    assert not redrawn, f"{name}: a drag must redraw once, on release:\n" + "\n".join(redrawn)
    assert not slow, (
        f"{name}: no visible response within its budget (after one retry):\n" + "\n".join(slow)
    )
    assert not problems, f"{name}: " + "\n".join(problems)
