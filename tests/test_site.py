"""The static site and the slide decks build from the stored notebooks, and every link resolves."""

from __future__ import annotations

import importlib.util
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from course.catalog import LESSONS, Lesson
from course.errors import CourseError

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts/build_site.py")
build_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_site)


class _Links(HTMLParser):
    """Collects <a href> and <img src> values."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = {"a": "href", "img": "src"}.get(tag)
        self.links += [value for name, value in attrs if name == wanted and value]


def links(path: Path) -> list[str]:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.links


def local_links(path: Path) -> list[str]:
    """Links to other files of the build (not web addresses, anchors or embedded data)."""
    remote = ("http://", "https://", "#", "data:", "mailto:")
    return [link.split("#")[0] for link in links(path) if not link.startswith(remote)]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("build")
    build_site.build_site(out / "site")
    build_site.build_slides(out / "slides")
    return {"site": out / "site", "slides": out / "slides"}


@pytest.mark.parametrize("kind, suffix", [("site", ".html"), ("slides", ".slides.html")])
def test_index_links_every_lesson_and_each_link_resolves(built, kind, suffix):
    index = built[kind] / "index.html"
    targets = local_links(index)
    assert targets == [build_site.page_name(lesson, suffix) for lesson in LESSONS]
    for target in targets:
        assert (built[kind] / target).is_file(), f"{kind}/index.html links to missing {target}"


@pytest.mark.parametrize("kind, suffix", [("site", ".html"), ("slides", ".slides.html")])
def test_each_page_carries_its_title_and_its_links_resolve(built, kind, suffix):
    for lesson in LESSONS:
        page = built[kind] / build_site.page_name(lesson, suffix)
        text = page.read_text(encoding="utf-8")
        assert f"<title>{build_site.heading(lesson)}" in text  # decks add " slides"
        assert lesson.title in text
        for target in local_links(page):
            assert (built[kind] / target).is_file(), f"{page.name} links to missing {target}"


def test_index_shows_question_and_time(built):
    text = (built["site"] / "index.html").read_text(encoding="utf-8")
    for lesson in LESSONS:
        assert build_site.html.escape(lesson.question) in text
        assert f"{lesson.minutes} min" in text


def test_decks_have_one_slide_per_heading(built):
    for lesson in LESSONS:
        nb = nbformat.read(ROOT / "notebooks" / lesson.filename, as_version=4)
        slides = sum(c.metadata.get("slideshow", {}).get("slide_type") == "slide" for c in nb.cells)
        text = (built["slides"] / build_site.page_name(lesson, ".slides.html")).read_text()
        assert 'class="reveal"' in text
        assert text.count("<section") >= slides > 0, lesson.filename


def _widget_notebook(path: Path, with_figure: bool) -> None:
    data = {build_site.WIDGET_MIME: {"model_id": "abc", "version_major": 2}, "text/plain": "P()"}
    if with_figure:
        data["image/png"] = "iVBORw0KGgo="
    cells = [
        new_markdown_cell("# 00 · Tiny\n\nDoes it build? Next: [01_next.ipynb](01_next.ipynb)"),
        new_code_cell("panel", outputs=[new_output("display_data", data=data)]),
    ]
    nbformat.write(new_notebook(cells=cells), path)


@pytest.mark.parametrize("with_figure", [False, True])
def test_widgets_become_a_note_or_their_static_figure(tmp_path, with_figure):
    _widget_notebook(tmp_path / "00_tiny.ipynb", with_figure)
    lesson = Lesson("00_tiny.ipynb", "Tiny", "Does it build?", 1, (), ())
    index, page = build_site.build(
        build_site.HTMLExporter(template_name="lab"),
        tmp_path / "out",
        ".html",
        "T",
        tmp_path,
        [lesson],
    )
    text = page.read_text()
    assert (build_site.WIDGET_NOTE in text) is not with_figure
    assert ("data:image/png;base64,iVBORw0KGgo=" in text) is with_figure
    assert 'href="01_next.html"' in text
    assert local_links(index) == ["00_tiny.html"]


def test_a_missing_notebook_is_a_clear_error(tmp_path):
    with pytest.raises(CourseError, match="01_the_plateau.ipynb"):
        build_site.build_site(tmp_path / "site", notebook_dir=tmp_path, lessons=LESSONS[1:2])
