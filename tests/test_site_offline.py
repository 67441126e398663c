"""`make site` and `make slides` output, viewed in headless Chromium with the network cut off.

A workshop room's network is the first thing to fail, so every request to anything but a local
file is blocked (and recorded: a page must not even try). The pages must still render their
styles, typeset maths with the MathJax they carry, and the decks must move on a key press.
The real course is built once (widgets drawn), after a `make fetch-sources` whose downloads are
made up (FakeGitHub: tests never touch the network), so notebook 06's page shows PyTorch's
kernels; maths is checked on a one-cell notebook, since the lessons may not use any. Every page
and every slide: nothing wider than the screen, text tables unwrapped on the site, and no serious
or critical axe-core finding. A slide shows all it holds at once on a 1280x720 screen, in text of
at least 14 px: nothing on it scrolls or leaves the screen. Screenshots go to build/screenshots/
for a person.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_markdown_cell, new_notebook

from course.catalog import LESSONS, Lesson, code_packages
from course.kernels import upstream
from tests.accessibility import findings, report
from tests.kernels.test_upstream import FakeGitHub

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = ROOT / "build" / "screenshots"
MATHS = r"Adam divides by $\sqrt{\hat v_t} + \epsilon$, and $$m_t = \beta_1 m_{t-1} + g_t.$$"
# reveal.js loads through require.js (no global): read the current slide from the DOM. A slide
# is a <section> without slides inside (a stack's slides are below its heading's slide).
SLIDES = "[...document.querySelectorAll('.reveal .slides section:not(.stack)')]"
CURRENT_SLIDE = f"{SLIDES}.findIndex(s => s.classList.contains('present'))"
SLIDE_COUNT = f"{SLIDES}.length"
MIN_TEXT_PX = 14
# What a presenter would have to scroll on the shown slide, or could not see: boxes whose content
# is taller or wider than they are (unless they let it show), anything past the screen's edges,
# and the smallest text as drawn on the screen (reveal.js scales the slide to fit the window).
SLIDE_PROBLEMS = """([width, height, smallest]) => {
    const slide = document.querySelector('.reveal .slides section.present:not(.stack)');
    const scale = slide.getBoundingClientRect().width / slide.offsetWidth;
    const problems = [];
    const what = box => box.tagName + ' ' + box.textContent.trim().slice(0, 50);
    const past = r => r.top < -1 || r.left < -1 || r.bottom > height + 1 || r.right > width + 1;
    for (const box of [slide, ...slide.querySelectorAll('*')]) {
        const style = getComputedStyle(box);
        if (box.scrollHeight > box.clientHeight + 1 && style.overflowY !== 'visible')
            problems.push(`scrolls down ${box.scrollHeight - box.clientHeight} px: ${what(box)}`);
        if (box.scrollWidth > box.clientWidth + 1 && style.overflowX !== 'visible')
            problems.push(`scrolls sideways ${box.scrollWidth - box.clientWidth} px: ${what(box)}`);
        if (box.getClientRects().length === 0) continue;
        const r = box.getBoundingClientRect();
        if (r.width && r.height && past(r))
            problems.push('leaves the screen: ' + what(box) + ' ' + JSON.stringify(r));
        const text = [...box.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
        const size = parseFloat(style.fontSize) * scale;
        if (text && size < smallest)
            problems.push('text of ' + size.toFixed(1) + ' px: ' + what(box));
    }
    return problems;
}"""
DRAWING = 'img[alt^="The widget\'s first drawing"]'
SITE_SCREEN, DECK_SCREEN = {"width": 1280, "height": 800}, {"width": 1280, "height": 720}
# Boxes whose content is wider or taller than they are, and whether each scrolls (overflow auto
# or scroll) and takes keyboard focus; text outputs whose lines wrap.
OVERFLOWS = """(root) => [...root.querySelectorAll('pre, div, section')].flatMap(box => {
    const style = getComputedStyle(box);
    const scrolls = v => v === 'auto' || v === 'scroll';
    const wide = box.scrollWidth > box.clientWidth + 1;
    const tall = box.scrollHeight > box.clientHeight + 1;
    const hides = v => v !== 'visible';
    if (!(wide && hides(style.overflowX)) && !(tall && hides(style.overflowY))) return [];
    return [{what: box.tagName + ' ' + box.textContent.trim().slice(0, 50),
             scrolls: (!wide || scrolls(style.overflowX)) && (!tall || scrolls(style.overflowY)),
             focusable: box.tabIndex >= 0}];
})"""
WRAPPED_TEXT = """(root) => [...root.querySelectorAll('.jp-RenderedText pre')]
    .filter(pre => getComputedStyle(pre).whiteSpace !== 'pre')
    .map(pre => pre.textContent.slice(0, 50))"""
_spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts/build_site.py")
build_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_site)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Iterator[dict[str, Path]]:
    out = tmp_path_factory.mktemp("offline")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COURSE_CACHE_DIR", str(out / "cache"))
        patch.setenv("COURSE_OFFLINE", "0")  # the instructor, online, runs `make fetch-sources`
        patch.setattr(upstream.urllib.request, "urlopen", FakeGitHub())
        assert upstream.main() == 0
        patch.setattr(upstream.urllib.request, "urlopen", _no_network)
        build_site.build_site(out / "site")
        build_site.build_slides(out / "slides")
        yield _build_maths(out)


def _no_network(*args, **kwargs):
    raise OSError("the site's build must not touch the network")


def _build_maths(out: Path) -> dict[str, Path]:
    maths_dir = out / "maths_notebooks"
    maths_dir.mkdir()
    cells = [new_markdown_cell(f"# 00 · Maths\n\n{MATHS}"), new_markdown_cell("## Second\n\nnext")]
    for cell in cells:
        cell.metadata["slideshow"] = {"slide_type": "slide"}
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

    def __init__(self, browser, screen: dict[str, int] = SITE_SCREEN) -> None:
        self.context = browser.new_context(viewport=screen)
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


@pytest.fixture
def deck_screen(browser) -> Iterator[OfflinePage]:
    """A 1280x720 screen: a projector's, where every slide must fit."""
    page = OfflinePage(browser, DECK_SCREEN)
    try:
        yield page
    finally:
        page.close()


def slides(page) -> Iterator[int]:
    """Show each slide of the open deck in turn, moving on with the arrow key as a presenter
    does, at rest (transitions off: a slide half faded in would measure too pale); yields its
    number."""
    page.wait_for_selector(".reveal.ready", timeout=20_000)
    page.add_style_tag(content=".reveal .slides section { transition: none !important; }")
    for number in range(page.evaluate(SLIDE_COUNT)):
        if number:
            page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => ({CURRENT_SLIDE}) === {number}", timeout=5_000)
        yield number


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
        drawn[lesson.filename[:2]] = page.locator(DRAWING).count()
        for width in page.eval_on_selector_all(DRAWING, "imgs => imgs.map(i => i.naturalWidth)"):
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


def _code(lesson: Lesson) -> str:
    notebook = nbformat.read(ROOT / "notebooks" / lesson.filename, as_version=4)
    return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")


def test_notebook_06s_kernels_show_offline_after_fetch_sources(built, offline):
    (lesson,) = [lesson for lesson in LESSONS if "upstream.show(" in _code(lesson)]
    page = offline.open(built["site"] / build_site.page_name(lesson, ".html"))
    text = page.inner_text("main")
    for source in upstream.SOURCES:
        assert f"static void {source.function}(" in text, source.label
    assert "needsCopyToOutput" in text and "not shown" not in text  # the made-up bodies
    offline.assert_clean()
    shot(page, "site_06_kernels")


def test_site_pages_fit_the_screen_and_keep_text_lines(built, offline):
    problems = []
    for path in sorted(built["site"].glob("*.html")):
        page = offline.open(path)
        if page.evaluate("document.documentElement.scrollWidth") > SITE_SCREEN["width"]:
            problems.append(f"{path.name}: the page scrolls sideways")
        for box in page.evaluate(OVERFLOWS, page.query_selector("body")):
            if not (box["scrolls"] and box["focusable"]):
                problems.append(f"{path.name}: clipped or not keyboard-scrollable: {box}")
        for text in page.evaluate(WRAPPED_TEXT, page.query_selector("body")):
            problems.append(f"{path.name}: a printed text wraps its lines: {text!r}")
    assert not problems, "\n".join(problems[:20])
    offline.assert_clean()


def test_every_slide_shows_all_it_holds_at_once_on_a_1280x720_screen(built, deck_screen):
    """No slide has a box to scroll (issue 38: 79 of 86 had), nothing leaves the screen, and its
    text is at least 14 px: scripts/build_site.py's fit_slides cut the notebooks to fit."""
    problems, count = [], 0
    screen = [DECK_SCREEN["width"], DECK_SCREEN["height"], MIN_TEXT_PX]
    for path in sorted(built["slides"].glob("*.slides.html")):
        page = deck_screen.open(path)
        for number in slides(page):
            count += 1
            problems += [
                f"{path.name} slide {number}: {p}" for p in page.evaluate(SLIDE_PROBLEMS, screen)
            ]
    assert count > len(LESSONS)
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:20])
    shot(page, "slides_last")
    deck_screen.assert_clean()


def test_the_site_has_no_serious_accessibility_findings(built, offline):
    found = []
    for path in sorted(built["site"].glob("*.html")):
        found += findings(offline.open(path), where=path.name)
    assert not found, report(found)
    offline.assert_clean()


# What axe checks on each slide: the slide shown (reveal.js marks it, and the stack holding it,
# `present`). The frame around the slides (arrows, progress bar) is checked as a whole on a deck's
# first and last slide, where its buttons change state; checking all of `.reveal` on every slide
# took axe 2-3x as long for the same findings.
PRESENT_SLIDE = ".reveal .slides section.present"


def test_the_decks_have_no_serious_accessibility_findings(built, deck_screen):
    found = findings(deck_screen.open(built["slides"] / "index.html"), where="index.html")
    for path in sorted(built["slides"].glob("*.slides.html")):
        page = deck_screen.open(path)
        last = page.evaluate(SLIDE_COUNT) - 1
        for number in slides(page):
            shown = [".reveal"] if number in (0, last) else [PRESENT_SLIDE]
            found += findings(page, include=shown, where=f"{path.name} slide {number}")
    assert not found, report(found)
    deck_screen.assert_clean()
