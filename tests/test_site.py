"""The static site and the slide decks build from the stored notebooks, and every link resolves.

These tests serve the pages' scripts from a stand-in node_modules (no npm needed) and leave
widgets as notes, so they stay quick; tests/test_site_offline.py (marker `browser`) builds with the
real npm packages and widget drawings and looks at the result in Chromium with the network cut.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from course import journal
from course.catalog import LESSONS, Lesson
from course.errors import CourseError
from course.figures import png_html
from course.kernels import upstream
from course.start import tracker

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / f"scripts/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_site = _load("build_site")
web_deps = _load("web_deps")
TINY = Lesson("00_tiny.ipynb", "Tiny", "Does it build?", 1, (), ())


class _Links(HTMLParser):
    """Collects <a href>, <img src>, <script src> and <link href> values."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.loads: list[str] = []  # what the page fetches by itself (scripts, styles, images)
        self.alts: list[str | None] = []  # each <img>'s alt text (None: no alt attribute)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = {"a": "href", "img": "src", "script": "src", "link": "href"}.get(tag)
        values = [value for name, value in attrs if name == wanted and value]
        if tag in ("a", "img"):
            self.links += values
        if tag != "a":
            self.loads += values
        if tag == "img":
            self.alts.append(dict(attrs).get("alt"))


def parsed(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def local_links(path: Path) -> list[str]:
    """Links to other files of the build (not web addresses, anchors or embedded data)."""
    remote = ("http://", "https://", "#", "data:", "mailto:")
    return [link.split("#")[0] for link in parsed(path).links if not link.startswith(remote)]


@pytest.fixture(scope="module")
def fake_web(tmp_path_factory) -> Path:
    """A node_modules with one small file per path the pages load."""
    web = tmp_path_factory.mktemp("node_modules")
    for relative in build_site.SLIDE_FILES:
        path = web / relative
        if path.suffix not in (".js", ".css"):
            path = path / "part.js"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"/* {relative} */")
    return web


@pytest.fixture(scope="module")
def built(tmp_path_factory, fake_web) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("build")
    build_site.build_site(out / "site", web=fake_web, draw=False)
    build_site.build_slides(out / "slides", web=fake_web, draw=False)
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


@pytest.mark.parametrize("kind, suffix", [("site", ".html"), ("slides", ".slides.html")])
def test_pages_load_nothing_from_outside_the_build(built, kind, suffix):
    for lesson in LESSONS:
        page = built[kind] / build_site.page_name(lesson, suffix)
        loads = [src.split("?")[0] for src in parsed(page).loads if not src.startswith("data:")]
        assert loads, f"{page.name} loads no scripts at all?"
        for src in loads:
            assert not re.match(r"(https?:)?//", src), f"{page.name} loads {src} from the web"
            assert (built[kind] / src).is_file(), f"{page.name} loads missing {src}"
        assert "mermaid" not in page.read_text(encoding="utf-8").lower()


def test_slides_load_reveal_from_the_build(built):
    text = (built["slides"] / build_site.page_name(LESSONS[1], ".slides.html")).read_text()
    assert '"_static/reveal.js/dist/reveal.js"' in text  # loaded through require.js
    assert (built["slides"] / "_static/reveal.js/plugin/notes/notes.js").is_file()
    assert "theme/white.css" in text


def test_lesson_pages_link_back_to_the_index_and_their_neighbours(built):
    for position, lesson in enumerate(LESSONS):
        links = local_links(built["site"] / build_site.page_name(lesson, ".html"))
        assert links.count("index.html") == 2, lesson.filename  # top and bottom
        if position:
            assert build_site.page_name(LESSONS[position - 1], ".html") in links
        if position + 1 < len(LESSONS):
            assert build_site.page_name(LESSONS[position + 1], ".html") in links


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


def _build_tiny(tmp_path: Path, fake_web: Path, cells: list, draw: bool = True) -> str:
    nbformat.write(new_notebook(cells=cells), tmp_path / TINY.filename)
    _, page = build_site.build_site(tmp_path / "out", tmp_path, [TINY], web=fake_web, draw=draw)
    return page.read_text()


def _widget_cell(source: str, with_figure: bool = False):
    data = {build_site.WIDGET_MIME: {"model_id": "abc", "version_major": 2}, "text/plain": "P()"}
    if with_figure:
        data["text/html"] = png_html("iVBORw0KGgo=", "A panel's static figure of one loss curve")
    return new_code_cell(source, outputs=[new_output("display_data", data=data)])


TITLE = new_markdown_cell("# 00 · Tiny\n\nDoes it build? Next: [01_next.ipynb](01_next.ipynb)")


@pytest.mark.parametrize("with_figure", [False, True])
def test_widgets_become_a_note_or_their_static_figure(tmp_path, with_figure):
    nbformat.write(
        new_notebook(cells=[TITLE, _widget_cell("panel", with_figure)]), tmp_path / TINY.filename
    )
    index, page = build_site.build(
        build_site.HTMLExporter(template_name="lab"),
        tmp_path / "out",
        ".html",
        "T",
        tmp_path,
        [TINY],
    )
    text = page.read_text()
    assert (build_site.WIDGET_NOTE in text) is not with_figure
    assert ("data:image/png;base64,iVBORw0KGgo=" in text) is with_figure
    assert 'href="01_next.html"' in text
    assert local_links(index) == ["00_tiny.html"]


def test_a_course_panel_shows_its_first_drawing(tmp_path, fake_web):
    cells = [
        TITLE,
        new_code_cell("from course.ui import widget_check"),
        _widget_cell("widget_check()"),
    ]
    text = _build_tiny(tmp_path, fake_web, cells)
    assert build_site.FIRST_DRAWING in text and build_site.WIDGET_NOTE not in text
    # the alt text says what the figure shows: its description, its title and axis labels
    images = _Links()
    images.feed(text)
    (alt,) = images.alts
    assert alt.startswith("The widget's first drawing: ") and alt.endswith("(x: i, y: i²)"), alt
    assert "squares of 1..4" in alt
    assert "Widgets work: the slider says 4." in text  # the panel's text under its figure


GENERIC_ALTS = {"image", "figure", "plot", "png", "no description has been provided for this image"}


@pytest.mark.parametrize("kind, suffix", [("site", ".html"), ("slides", ".slides.html")])
def test_no_image_on_the_site_or_the_decks_lacks_a_specific_alt(built, kind, suffix):
    """A screen reader reads the alt instead of the image: never missing, empty or generic."""
    shown = 0
    for lesson in LESSONS:
        page = built[kind] / build_site.page_name(lesson, suffix)
        for alt in parsed(page).alts:
            shown += 1
            assert alt is not None and alt.strip(), f"{page.name}: an <img> without alt text"
            said = alt.strip().lower().removeprefix("the widget's first drawing").strip(" :")
            assert said not in GENERIC_ALTS and len(said.split()) >= 5, f"{page.name}: {alt!r}"
    assert shown >= 10  # the diagrams and the stored figures are all there


def _figure_cell(data: dict) -> nbformat.NotebookNode:
    data = {**data, "text/plain": "<Figure size 700x300 with 1 Axes>"}
    return new_code_cell("loss_figure(runs)", outputs=[new_output("display_data", data=data)])


def test_a_stored_figure_keeps_the_alt_text_it_was_shown_with(tmp_path, fake_web):
    alt = 'Line plot of the loss, "transposed" & contiguous'
    figure = _figure_cell({"text/html": png_html("iVBORw0KGgo=", alt)})
    text = _build_tiny(tmp_path, fake_web, [TITLE, figure])
    images = _Links()
    images.feed(text)
    assert images.alts == [alt] and "data:image/png;base64,iVBORw0KGgo=" in text


def test_a_stored_png_without_alt_text_is_refused_naming_its_cell(tmp_path, fake_web):
    with pytest.raises(CourseError, match=r"'loss_figure\(runs\)' is a PNG without alt.*describe"):
        _build_tiny(tmp_path, fake_web, [TITLE, _figure_cell({"image/png": "iVBORw0KGgo="})])


def test_a_figure_without_titles_still_has_alt_text():
    from matplotlib.figure import Figure

    figure = Figure()
    figure.add_subplot()
    assert build_site.figure_alt(figure) == "The widget's first drawing"
    figure.add_subplot().set(title="loss", xlabel="step")
    assert build_site.figure_alt(figure) == "The widget's first drawing: loss (x: step)"


def test_the_build_machines_progress_stays_off_the_pages(tmp_path, fake_web, monkeypatch):
    mine = tmp_path / "build-machine-progress"
    monkeypatch.setenv("COURSE_PROGRESS_DIR", str(mine))
    monkeypatch.setattr(tracker, "all_exercises", lambda: ["04.secret_exercise"])
    journal.record("04.secret_exercise", "check", passed=True)
    saved = journal.progress_file().read_text()
    cells = [
        TITLE,
        new_code_cell("from course.start.tracker import progress_panel"),
        _widget_cell("progress_panel()"),
    ]
    text = _build_tiny(tmp_path, fake_web, cells)
    assert build_site.OWN_PROGRESS_NOTE in text
    assert str(mine) not in text and "secret_exercise" not in text
    assert "progress.jsonl" not in text  # no path of the machine that built the page
    assert os.environ["COURSE_PROGRESS_DIR"] == str(mine)  # put back after drawing
    assert journal.progress_file().read_text() == saved


def test_panels_are_drawn_with_an_empty_progress_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_PROGRESS_DIR", str(tmp_path))
    with build_site.own_progress_folder() as folder:
        assert journal.progress_dir() == Path(folder) != tmp_path
        assert not journal.load()
    assert journal.progress_dir() == tmp_path
    monkeypatch.delenv("COURSE_PROGRESS_DIR")
    with build_site.own_progress_folder():
        pass
    assert "COURSE_PROGRESS_DIR" not in os.environ


def test_code_shows_no_solution_or_nbval_markers(tmp_path, fake_web):
    source = (
        "# NBVAL_CHECK_OUTPUT\n"
        "def answer():\n"
        "    ### BEGIN SOLUTION\n"
        "    return 42\n"
        "    ### END SOLUTION\n"
        "# NBVAL_IGNORE_OUTPUT"
    )
    text = _build_tiny(tmp_path, fake_web, [TITLE, new_code_cell(source)])
    assert "answer" in text and "42" in text
    assert "SOLUTION" not in text and "NBVAL" not in text


@pytest.mark.parametrize("kind", ["site", "slides"])
def test_no_page_of_the_course_shows_a_marker(built, kind):
    for page in built[kind].glob("*.html"):
        text = page.read_text(encoding="utf-8")
        for marker in ("### BEGIN SOLUTION", "### END SOLUTION", "# NBVAL_"):
            assert marker not in text, f"{kind}/{page.name} shows {marker}"


SITE_AND_DECKS = [("site", ".html", "course_lab"), ("slides", ".slides.html", "course_reveal")]


@pytest.mark.parametrize("kind, suffix, template", SITE_AND_DECKS)
def test_pages_carry_the_course_rules_for_wide_text_and_tall_slides(built, kind, suffix, template):
    """On the site printed tables keep their lines and scroll; on a slide nothing scrolls, so
    text wraps between words (a printed table was cut between its columns by the build):
    course.css says so (tests/test_site_offline.py measures the result in Chromium)."""
    rules = (build_site.TEMPLATES / template / "course.css").read_text()
    if kind == "site":
        assert "white-space: pre;" in rules and "overflow-x: auto;" in rules
    else:
        assert "white-space: pre-wrap;" in rules and "overflow-wrap: break-word;" in rules
        assert "anywhere" not in rules and "break-all" not in rules
    for lesson in LESSONS:
        assert rules in (built[kind] / build_site.page_name(lesson, suffix)).read_text()


# --- decks: slides that fit -----------------------------------------------------------------


def test_a_wide_printed_table_is_cut_between_its_columns():
    table = "\n".join(
        [
            "name    alpha    beta    gamma",
            "x       1.0      2.0     3.0",
            "longer  10.0     20.0    30.0",
        ]
    )
    folded = build_site.fold_table(table, chars=22)
    assert folded.split("\n") == [
        "name    alpha    beta",
        "x       1.0      2.0",
        "longer  10.0     20.0",
        "",
        "name    gamma",
        "x       3.0",
        "longer  30.0",
    ]
    assert build_site.fold_table(table, chars=40) == table  # fits: left as it is
    prose = "a sentence far too long for the line, with no columns at all in it"
    assert build_site.fold_table(prose + "\n" + prose, chars=20) == prose + "\n" + prose


def test_html_is_cut_between_its_top_level_parts():
    markup = "<p>one <b>bold</b></p><div><p>a</p><p>b</p></div><img src='x.png'><pre>1\n2</pre>"
    assert build_site.html_blocks(markup) == [
        "<p>one <b>bold</b></p>",
        "<div><p>a</p><p>b</p></div>",
        "<img src='x.png'>",
        "<pre>1\n2</pre>",
    ]


def _slides(nb) -> list[list]:
    """The cells of each slide of a fitted notebook."""
    out = []
    for cell in nb.cells:
        if cell.metadata["slideshow"]["slide_type"] != "-" or not out:
            out.append([])
        out[-1].append(cell)
    return out


def _deck_notebook(cells):
    for cell in cells:
        cell.metadata["slideshow"] = {"slide_type": "-"}
    cells[0].metadata["slideshow"] = {"slide_type": "slide"}
    return new_notebook(cells=cells)


def test_a_long_cell_goes_on_in_the_slides_below(tmp_path):
    printed = "".join(f"line {n}\n" for n in range(45))
    code = new_code_cell("\n".join(f"x{n} = {n}" for n in range(40)))
    code.outputs = [new_output("stream", text=printed)]
    nb = _deck_notebook([new_markdown_cell("## A heading\n\nSome words."), code])
    fitted = build_site.fit_slides(nb, tmp_path, "00_tiny.html")
    slides = _slides(fitted)
    assert len(slides) >= 4
    assert [s[0].metadata["slideshow"]["slide_type"] for s in slides[1:]] == ["subslide"] * (
        len(slides) - 1
    )
    sources = [c.source for s in slides for c in s if c.cell_type == "code" and c.source]
    assert "\n".join(sources) == code.source  # every line once, in order
    shown = "".join(o.text for s in slides for c in s for o in c.get("outputs", []) if "text" in o)
    assert shown == printed
    for s in slides:
        height = sum(
            piece.height for cell in s for piece in build_site.cell_pieces(0, cell, tmp_path)
        )
        assert height <= build_site.SLIDE_BUDGET + build_site.CODE_BOX
    only_outputs = [c for s in slides for c in s if c.cell_type == "code" and not c.source]
    assert only_outputs and all(c.metadata["transient"]["remove_source"] for c in only_outputs)
    assert len({c.id for c in fitted.cells}) == len(fitted.cells)


def test_a_very_long_output_shows_its_start_and_links_to_the_site(tmp_path):
    code = new_code_cell("print(source)")
    code.outputs = [new_output("stream", text="".join(f"line {n}\n" for n in range(300)))]
    nb = _deck_notebook([new_markdown_cell("## Source"), code])
    fitted = build_site.fit_slides(nb, tmp_path, "07_kernels.html")
    outputs = [o for c in fitted.cells for o in c.get("outputs", [])]
    shown = sum(o.text.count("\n") for o in outputs if o.output_type == "stream")
    assert shown < 300
    note = outputs[-1].data["text/html"]
    assert f"{300 - shown} more lines" in note and "href='../site/07_kernels.html'" in note
    assert len(_slides(fitted)) <= 2 + build_site.EXCERPT_SLIDES  # the heading, the note


def test_decks_are_laid_out_on_a_1280x720_canvas_and_move_through_every_slide(built):
    text = (built["slides"] / build_site.page_name(LESSONS[1], ".slides.html")).read_text()
    assert "width: 1280," in text and "height: 720," in text
    assert 'navigationMode: "linear"' in text


@pytest.mark.parametrize(
    "source, drawn",
    [
        ("ui.widget_check()", True),  # through a module alias
        ("w = 3\nui.widget_check()", True),
        ("ui.widget_check(unknown=3)", False),  # no such parameter: cannot be drawn
        ("ui.widget_check(unknown=x)", True),  # a value only the kernel knows: dropped
        ("ui.widget_check(x)", False),  # a positional value only the kernel knows
        ("ui.html_table([])", False),  # not a Panel
        ("import os\nos.getcwd()", False),  # never runs anything outside the course
        ("panel = ui.widget_check()", False),  # not the cell's value
    ],
)
def test_which_widget_cells_are_drawn(source, drawn):
    names = {"ui": "course.ui", "os": "os"}
    assert (build_site.first_drawing(source, names) is not None) is drawn


def test_keyword_values_the_build_cannot_know_take_their_defaults():
    names = {"sweep_widget": "course.story.sweep.sweep_widget"}
    function, args, kwargs = build_site.panel_call("sweep_widget(first=story, steps=5)", names)
    assert function.__name__ == "sweep_widget" and args == [] and kwargs == {"steps": 5}


def test_drawing_can_be_turned_off(tmp_path, fake_web):
    cells = [
        TITLE,
        new_code_cell("from course.ui import widget_check"),
        _widget_cell("widget_check()"),
    ]
    text = _build_tiny(tmp_path, fake_web, cells, draw=False)
    assert build_site.WIDGET_NOTE in text and build_site.FIRST_DRAWING not in text


def test_doctor_output_says_it_is_the_build_machines(tmp_path, fake_web):
    html_output = new_output("display_data", data={"text/html": "<table>doctor</table>"})
    doctor = new_code_cell("from course.doctor import report_html\nreport_html()")
    doctor.outputs = [html_output]
    other = new_code_cell("print(1)", outputs=[new_output("stream", text="1\n")])
    text = _build_tiny(tmp_path, fake_web, [TITLE, doctor, other])
    assert text.count("the machine that built this site") == 1
    assert text.index("the machine that built this site") < text.index("<table>doctor</table>")


def _made_up_kernel(name: str) -> str:
    """A stand-in for a PyTorch source file holding function `name` (tests never fetch)."""
    return f"// made up\nstatic void {name}(const Tensor& output) {{\n  compute(output);\n}}\n"


def test_pytorchs_kernels_are_shown_from_the_cache_and_never_fetched(
    tmp_path, fake_web, monkeypatch
):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COURSE_OFFLINE", "0")  # even where fetching is allowed, the build reads
    monkeypatch.setattr(upstream.urllib.request, "urlopen", _no_network)
    show = new_code_cell(
        "# NBVAL_IGNORE_OUTPUT\nprint(upstream.show(upstream.BROKEN, upstream.SIBLING))"
    )
    cells = [TITLE, new_code_cell("from course.kernels import upstream"), show]
    text = _build_tiny(tmp_path, fake_web, cells)
    assert "not shown" in text and "make fetch-sources" in text
    assert upstream.BROKEN.page_url in text and upstream.SIBLING.page_url in text
    assert len(build_site.missing_excerpts()) == len(upstream.SOURCES)
    for source in (upstream.BROKEN, upstream.SIBLING):  # what `make fetch-sources` leaves
        path = upstream.cached_path(source)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_made_up_kernel(source.function))
    text = _build_tiny(tmp_path, fake_web, cells)
    assert "static void addc_mul_div_out_mps(" in text and "static void binaryOpTensor(" in text
    assert "not shown" not in text
    assert build_site.missing_excerpts() == [f"{upstream.FIXED.function} ({upstream.FIXED.label})"]


def test_only_cells_showing_kernel_sources_get_excerpts():
    names = {"upstream": "course.kernels.upstream", "os": "os"}
    assert build_site.upstream_excerpts("print(upstream.BROKEN)", names) is None
    assert build_site.upstream_excerpts("upstream.show(os.sep)", names) is None
    assert build_site.upstream_excerpts("%time upstream.show()", names) is None


def _no_network(*args, **kwargs):
    raise OSError("the site's build never touches the network")


def test_imported_names_map_to_dotted_objects():
    nb = new_notebook(
        cells=[
            new_code_cell(
                "import torch\nimport course.ui as ui\nfrom course.kernels import lab as L"
            ),
            new_code_cell("%matplotlib inline"),  # magics are skipped, not fatal
        ]
    )
    assert build_site.imported_names(nb) == {
        "torch": "torch",
        "ui": "course.ui",
        "L": "course.kernels.lab",
    }


def test_figures_from_assets_travel_with_the_pages(tmp_path, fake_web):
    notebooks = tmp_path / "notebooks"
    (tmp_path / "assets").mkdir()
    notebooks.mkdir()
    (tmp_path / "assets" / "one.png").write_bytes((ROOT / "assets/stack_layers.png").read_bytes())
    cells = [new_markdown_cell("# 00 · Tiny\n\n![The stack](../assets/one.png)")]
    text = _build_tiny(notebooks, fake_web, cells)
    assert 'src="assets/one.png"' in text
    assert (notebooks / "out" / "assets" / "one.png").is_file()
    cells = [new_markdown_cell("# 00 · Tiny\n\n![Gone](../assets/gone.png)")]
    with pytest.raises(CourseError, match="gone.png, which does not exist"):
        _build_tiny(notebooks, fake_web, cells)


MARKDOWN_IMAGE = re.compile(r"!\[([^\]]*)\]\(\.\./assets/([\w.-]+)\)")


def test_every_figure_says_what_it_shows():
    """A screen reader reads the alt text instead of the figure: it must carry what the figure
    shows (its parts and values), not a title or a file name. Every diagram is shown somewhere."""
    shown = set()
    for lesson in LESSONS:
        nb = nbformat.read(ROOT / "notebooks" / lesson.filename, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for alt, name in MARKDOWN_IMAGE.findall(cell.source):
                shown.add(name)
                words = alt.split()
                assert len(words) >= 20, f"{lesson.filename}: ![{alt}] says too little of {name}"
                assert Path(name).stem not in alt, f"{lesson.filename}: {name}'s alt is its name"
    assert {path.name for path in (ROOT / "assets").glob("*.png")} <= shown


def test_a_mermaid_diagram_is_refused_clearly(tmp_path, fake_web):
    cells = [new_markdown_cell("# 00 · Tiny\n\n```mermaid\ngraph TD; A-->B\n```")]
    with pytest.raises(CourseError, match="mermaid diagram"):
        _build_tiny(tmp_path, fake_web, cells)


def test_a_missing_notebook_is_a_clear_error(tmp_path, fake_web):
    with pytest.raises(CourseError, match="01_the_plateau.ipynb"):
        build_site.build_site(tmp_path / "site", tmp_path, LESSONS[1:2], web=fake_web)


def test_a_missing_npm_file_is_a_clear_error(tmp_path):
    with pytest.raises(CourseError, match="make web"):
        build_site.build_site(tmp_path / "site", web=tmp_path / "empty", draw=False)


# --- web/package.json: what npm installs --------------------------------------------------------


def test_the_lock_pins_every_package_the_pages_and_the_hub_use():
    lock = json.loads((ROOT / "web/package-lock.json").read_text())
    pinned = {path.removeprefix("node_modules/") for path in lock["packages"] if path}
    used = {relative.split("/")[0] for relative in build_site.SLIDE_FILES}
    assert used | {"configurable-http-proxy", "axe-core"} <= pinned  # axe-core: browser tests
    spec = json.loads((ROOT / "web/package.json").read_text())
    wanted = spec["dependencies"] | spec["devDependencies"]
    for name, version in wanted.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version


def test_an_up_to_date_install_is_not_repeated(tmp_path, monkeypatch):
    node = tmp_path / "node"
    node.mkdir()
    (node / ".installed").write_text(web_deps.lock_hash())
    monkeypatch.setattr(web_deps.shutil, "which", lambda _name: pytest.fail("ran npm"))
    assert web_deps.node_modules(node) == node / "node_modules"


def test_without_npm_the_install_says_what_is_needed(tmp_path, monkeypatch):
    monkeypatch.setattr(web_deps.shutil, "which", lambda _name: None)
    with pytest.raises(CourseError, match="Node.js"):
        web_deps.node_modules(tmp_path / "node")
