"""`make site` and `make slides` output, viewed in headless Chromium with the network cut off.

A workshop room's network is the first thing to fail, so every request to anything but a local
file is blocked (and recorded: a page must not even try). The pages must still render their
styles, typeset maths with the MathJax they carry, and the decks must move on a key press.
The real course is built once (widgets drawn); maths is checked on a one-cell notebook, since
the lessons may not use any. Screenshots go to build/screenshots/ for a person to look at.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from nbformat.v4 import new_markdown_cell, new_notebook

from course.catalog import LESSONS, Lesson, code_packages

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = ROOT / "build" / "screenshots"
MATHS = r"Adam divides by $\sqrt{\hat v_t} + \epsilon$, and $$m_t = \beta_1 m_{t-1} + g_t.$$"
# reveal.js loads through require.js (no global): read the current slide from the DOM
CURRENT_SLIDE = (
    "[...document.querySelectorAll('.reveal .slides > section')]"
    ".findIndex(s => s.classList.contains('present'))"
)
_spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts/build_site.py")
build_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_site)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("offline")
    build_site.build_site(out / "site")
    build_site.build_slides(out / "slides")
    maths_dir = out / "maths_notebooks"
    maths_dir.mkdir()
    cells = [new_markdown_cell(f"# 00 · Maths\n\n{MATHS}"), new_markdown_cell("## Second\n\nnext")]
    for cell in cells:
        cell.metadata["slideshow"] = {"slide_type": "slide"}
    import nbformat

    nbformat.write(new_notebook(cells=cells), maths_dir / "00_maths.ipynb")
    maths = [Lesson("00_maths.ipynb", "Maths", "Does maths render?", 1, (), ())]
    build_site.build_site(out / "maths_site", maths_dir, maths)
    build_site.build_slides(out / "maths_slides", maths_dir, maths)
    return {
        "site": out / "site",
        "slides": out / "slides",
        "maths_site": out / "maths_site",
        "maths_slides": out / "maths_slides",
    }


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (CI does)")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


class OfflinePage:
    """A page whose every non-file request is blocked and recorded, with its errors recorded."""

    def __init__(self, browser) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.outside: list[str] = []
        self.failed: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("requestfailed", self._failed)

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(("file://", "data:")):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def _failed(self, request) -> None:
        if request.url.startswith("file://"):
            self.failed.append(request.url)

    def open(self, path: Path) -> object:
        self.page.goto(path.as_uri(), wait_until="load")
        return self.page

    def assert_clean(self) -> None:
        assert self.outside == [], f"requests to outside hosts: {self.outside}"
        assert self.failed == [], f"local files that failed to load: {self.failed}"
        assert self.errors == [], f"script errors: {self.errors}"

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def offline(browser) -> Iterator[OfflinePage]:
    page = OfflinePage(browser)
    try:
        yield page
    finally:
        page.close()


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"offline_{name}.png"))


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.filename[:2])
def test_site_pages_render_offline_with_styles_and_a_way_back(built, offline, lesson):
    page = offline.open(built["site"] / build_site.page_name(lesson, ".html"))
    style = page.eval_on_selector(
        ".jp-CodeCell .jp-InputArea-editor",
        "e => [getComputedStyle(e).backgroundColor,"
        " getComputedStyle(e.querySelector('pre')).fontFamily]",
    )
    assert style[0] != "rgba(0, 0, 0, 0)" and "monospace" in style[1], f"no lab style: {style}"
    assert page.locator("nav.course-nav a[href='index.html']").count() == 2
    page.wait_for_function("() => window.MathJax && MathJax.isReady === true", timeout=20_000)
    offline.assert_clean()
    shot(page, f"site_{lesson.filename[:2]}")


def test_widgets_show_their_first_drawing(built, offline):
    drawn = {}
    for lesson in LESSONS:
        page = offline.open(built["site"] / build_site.page_name(lesson, ".html"))
        drawn[lesson.filename[:2]] = page.locator("img[alt='the widget, as first drawn']").count()
        for width in page.eval_on_selector_all(
            "img[alt='the widget, as first drawn']", "imgs => imgs.map(i => i.naturalWidth)"
        ):
            assert width > 100, f"{lesson.filename}: a first drawing did not load"
    # the sweep plot, the stride diagram, the dispatch diagram
    assert drawn["01"] >= 1 and drawn["04"] >= 1 and drawn["05"] >= 1, drawn
    auditing = [lesson for lesson in LESSONS if "course.audit" in code_packages(lesson.filename)]
    audit = offline.open(built["site"] / build_site.page_name(auditing[0], ".html"))
    first = audit.get_by_text("The widget's first drawing").first  # the audit panel's table
    assert first.evaluate("e => !!e.closest('.jp-OutputArea-output').querySelector('table')")
    offline.assert_clean()


def test_site_typesets_maths_offline(built, offline):
    page = offline.open(built["maths_site"] / "00_maths.html")
    page.wait_for_selector(".MathJax_CHTML", timeout=20_000)
    assert page.locator(".MathJax_CHTML").count() == 2
    assert "\\sqrt" not in page.inner_text(".jp-RenderedMarkdown")
    offline.assert_clean()
    shot(page, "site_maths")


def test_decks_are_slides_offline_and_move_on_a_key_press(built, offline):
    page = offline.open(built["slides"] / build_site.page_name(LESSONS[1], ".slides.html"))
    page.wait_for_selector(".reveal.ready", timeout=20_000)
    font = page.eval_on_selector(".reveal", "e => getComputedStyle(e).fontFamily")
    assert "Source Sans Pro" in font, f"the reveal.js theme did not load: {font!r}"
    page.wait_for_function("() => document.fonts.check('42px \"Source Sans Pro\"')")
    assert page.evaluate(CURRENT_SLIDE) == 0
    shot(page, "slides_first")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => ({CURRENT_SLIDE}) === 1", timeout=5_000)
    shot(page, "slides_second")
    offline.assert_clean()


def test_deck_typesets_maths_offline(built, offline):
    page = offline.open(built["maths_slides"] / "00_maths.slides.html")
    page.wait_for_selector(".reveal.ready", timeout=20_000)
    page.wait_for_selector(".MathJax_CHTML", timeout=20_000)
    assert "\\sqrt" not in page.inner_text(".reveal .slides")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => ({CURRENT_SLIDE}) === 1", timeout=5_000)
    offline.assert_clean()
    shot(page, "slides_maths")


@pytest.mark.parametrize("kind", ["site", "slides"])
def test_every_deck_and_page_loads_without_outside_requests(built, offline, kind):
    for path in sorted(built[kind].glob("*.html")):
        offline.open(path)
    offline.assert_clean()
