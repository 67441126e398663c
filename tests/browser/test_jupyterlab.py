"""Every notebook, opened in JupyterLab in headless Chromium: Run All works and widgets respond.

`make test-browser` runs these (`pytest tests -m browser`); `make test` leaves them out. Each
notebook gets a fresh kernel and page; a screenshot of it, taken with its main widget in view,
lands in build/screenshots/ whether the test passes or not.
"""

from __future__ import annotations

import time

import nbformat
import pytest

from course.catalog import LESSONS
from tests.browser.conftest import NOTEBOOK_SRC, SCREENSHOTS, notebook_names
from tests.browser.lab_page import (
    WIDGET_MIME,
    errors_shown,
    move_a_control,
    open_notebook,
    run_all,
    screenshot_name,
    wait_for_widgets,
    widget_problems,
)

pytestmark = pytest.mark.browser

NOTEBOOKS = notebook_names()
MIN_RESPONSIVE = 4  # issue 9: the main widget of at least four notebooks must respond


def stored_widget_views(name: str) -> int:
    """How many widget views the stored (executed) notebook shows: the page must render as many."""
    nb = nbformat.read(NOTEBOOK_SRC / name, as_version=4)
    outputs = (o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    return sum(1 for o in outputs if WIDGET_MIME in o.get("data", {}))


def test_there_are_notebooks_to_open():
    assert NOTEBOOKS, f"no numbered notebooks in {NOTEBOOK_SRC}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_and_its_widgets_work(name, lab, browser, browser_report):
    started = time.perf_counter()
    lab.start_kernel_for(name)
    page = browser.new_page()
    panels = page.locator(".course-panel")
    try:
        open_notebook(page, lab.lab_url(name, workspace=name.split("_")[0]))
        run = run_all(page)
        errors = errors_shown(page)
        assert not errors, f"{name} shows errors:\n" + "\n---\n".join(errors)
        assert not run.unrun, f"{name}: Run All left {run.unrun} code cells unrun"
        wait_for_widgets(page)
        problems = widget_problems(page, stored_widget_views(name))
        assert not problems, f"{name}: " + "; ".join(problems)
        moved = move_a_control(page, panels.first) if panels.count() else None
        browser_report.notebooks[name] = {
            "seconds": time.perf_counter() - started,
            "run_all_s": run.seconds,
            "retried": run.retried,
            "panels": panels.count(),
            "moved": moved,
        }
    finally:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        if panels.count():
            panels.first.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / screenshot_name(name)))
        page.close()
        lab.stop_kernel_for(name)


def test_main_widgets_respond_in_enough_notebooks(browser_report):
    if set(browser_report.notebooks) != set(NOTEBOOKS):
        pytest.skip("needs every notebook's test to have run and passed in this session")
    responsive = [n for n, r in browser_report.notebooks.items() if r["moved"]]
    missing = [lesson.filename for lesson in LESSONS if lesson.filename not in NOTEBOOKS]
    if len(responsive) < MIN_RESPONSIVE and missing:
        pytest.skip(f"{len(responsive)} responsive so far; not written yet: {', '.join(missing)}")
    assert len(responsive) >= MIN_RESPONSIVE, (
        f"only {responsive} have a main widget whose controls change its figure or text"
    )
