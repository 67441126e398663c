"""Build the read-only course: a static HTML site (`make site`) and reveal.js decks (`make slides`).

Both are made from the notebooks' stored outputs (what `make notebooks` last executed), never by
re-running the notebooks, so a build takes seconds and needs no kernel. Both work offline (a
workshop room's network is the first thing to fail): the scripts nbconvert's templates would load
from CDNs (reveal.js, jQuery, require.js, MathJax) are copied into each build's `_static/` from the
npm packages web/package-lock.json pins (scripts/web_deps.py installs them into build/node), and
the decks use reveal.js's "white" theme, whose fonts ship with it. mermaid.js cannot load from
file:// pages, so a notebook with a mermaid diagram is refused rather than half-rendered.

Interactive widgets cannot run without a kernel. A widget output shows its static fallback when
the stored output has one; otherwise, when the cell ends in a call of a course function with
literal arguments, the build makes that panel now and embeds its first drawing (its default
state: arguments that are not literals are left to their defaults); otherwise a note says where
to run it. Panels are drawn with an empty progress folder of their own, so no page shows the
build machine's saved progress; a panel that shows the reader's own progress is left as a note.
Outputs of cells that use `course.doctor` describe the machine that executed the notebooks, and
the site says so.

A cell that shows PyTorch's own kernel source (`course.kernels.upstream.show`, whose output the
notebook does not store) shows it from the cache `make fetch-sources` fills, never from the
network: run that while online before the build, or the page shows links instead. Code cells
show the code without the `### BEGIN SOLUTION` / `# NBVAL_...` marker lines the tests and the
learner copies read. Every lesson page links back to the index and to its neighbours.

    python scripts/build_site.py --site              # build/site/index.html + one page per notebook
    python scripts/build_site.py --slides            # build/slides/NN_name.slides.html
    python scripts/build_site.py --site --out /tmp/x # elsewhere (tests do this)
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import copy
import functools
import html
import importlib
import inspect
import io
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter, SlidesExporter

from course import figures
from course.catalog import LESSONS, Lesson
from course.errors import CourseError
from course.kernels import upstream

try:
    from scripts.web_deps import node_modules  # imported from the repository root (tests)
except ModuleNotFoundError:
    from web_deps import node_modules  # run as `python scripts/build_site.py`

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
BUILD = ROOT / "build"
TEMPLATES = Path(__file__).resolve().parent / "site_templates"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
STATIC_MIMES = ("image/png", "image/svg+xml", "text/html")
WIDGET_NOTE = "Interactive widget: open this notebook in JupyterLab (make lab) to use it."
FIRST_DRAWING = (
    "The widget's first drawing, in its default state. Open this notebook in JupyterLab "
    "(make lab) to change its controls."
)
OWN_PROGRESS_NOTE = (
    "Your saved progress: this read-only page has none to show. Run this notebook in JupyterLab "
    "(make lab), or <code>python -m course progress</code>, to see yours."
)
BUILD_MACHINE_NOTE = (
    "This output shows the machine that built this site, not yours: run "
    "<code>python -m course doctor</code> (or notebook 00) to check your own."
)
# Links between notebooks ("Next: [01_x.ipynb](01_x.ipynb)") become links between pages.
NOTEBOOK_LINK = re.compile(r'href="(\d\d_[a-z0-9_]+)\.ipynb(#[^"]*)?"')
BODY_TAG = re.compile(r"<body[^>]*>")
# Marker lines for the tests and the learner copies, not for readers (README: testing policy).
MARKER_LINE = re.compile(r"^[ \t]*(### (BEGIN|END) SOLUTION|# NBVAL_[A-Z_]+)[ \t]*(\n|$)", re.M)
PROGRESS_ENV = "COURSE_PROGRESS_DIR"  # course.journal's folder for saved progress
MERMAID = re.compile(r"^```mermaid", re.MULTILINE)
# ![alt](../assets/NAME.png) in markdown, <img src="../assets/NAME.png"> in HTML (make assets)
ASSET_REF = re.compile(r"""(\]\(|src=["'])\.\./assets/([\w.-]+)""")
STATIC = "_static"
# What each page kind loads, as files of web/package.json's packages under build/node/node_modules.
MATHJAX = (
    "mathjax/MathJax.js",
    "mathjax/config/TeX-AMS_CHTML-full.js",
    "mathjax/config/Safe.js",
    "mathjax/extensions",
    "mathjax/jax/input/TeX",
    "mathjax/jax/output/CommonHTML",
    "mathjax/jax/element",
    "mathjax/fonts/HTML-CSS/TeX/woff",
)
SITE_FILES = ("requirejs/require.js", *MATHJAX)
SLIDE_FILES = (
    *SITE_FILES,
    "jquery/dist/jquery.min.js",
    "reveal.js/dist/reveal.js",
    "reveal.js/dist/reveal.css",
    "reveal.js/dist/theme/white.css",
    "reveal.js/dist/theme/fonts/source-sans-pro",
    "reveal.js/plugin/notes/notes.js",
)
OFFLINE_URLS = {
    "require_js_url": f"{STATIC}/requirejs/require.js",
    "jquery_url": f"{STATIC}/jquery/dist/jquery.min.js",
    "mathjax_url": f"{STATIC}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
}
NAV_STYLE = "font:14px system-ui,sans-serif;padding:.5rem 1rem;border-bottom:1px solid #ddd"


def page_name(lesson: Lesson, suffix: str) -> str:
    """NN_name.html (site) or NN_name.slides.html (slides) for notebooks/NN_name.ipynb."""
    return lesson.filename.removesuffix(".ipynb") + suffix


def heading(lesson: Lesson) -> str:
    """ "NN · Title", as each notebook's first cell writes it."""
    return f"{lesson.filename[:2]} · {lesson.title}"


# --- what a notebook's code refers to, without running the notebook -----------------------------


def imported_names(nb: nbformat.NotebookNode) -> dict[str, str]:
    """Each name the notebook's import statements bind, mapped to the dotted object it names."""
    names: dict[str, str] = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # IPython magics: such a cell imports nothing we resolve
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    names[bound] = alias.name if alias.asname else bound
    return names


def dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def resolve(path: str) -> object:
    """The object a dotted path names, importing the longest module prefix."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(path)


def course_target(node: ast.expr, names: dict[str, str]) -> str | None:
    """The dotted course.* path a called expression names, or None for anything else."""
    name = dotted(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    full = names.get(head)
    if full is None:
        return None
    path = f"{full}.{rest}" if rest else full
    return path if path.startswith("course.") else None


def cell_uses(cell: nbformat.NotebookNode, names: dict[str, str], module: str) -> bool:
    """Whether a code cell refers to anything imported from `module` (or the import itself)."""
    try:
        tree = ast.parse(cell.source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(module):
            return True
        target = course_target(node, names) if isinstance(node, ast.Name | ast.Attribute) else None
        if target and target.startswith(module):
            return True
    return False


# --- PyTorch's kernel source, from the cache only ---------------------------------------------


def upstream_excerpts(source: str, names: dict[str, str]) -> str | None:
    """What a cell calling `course.kernels.upstream.show(...)` prints, read from the cache
    (`make fetch-sources`); None for any other cell."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if course_target(node.func, names) != "course.kernels.upstream.show":
            continue
        targets = [course_target(arg, names) for arg in node.args]
        sources = [resolve(target) for target in targets if target]
        if len(sources) == len(node.args) and all(isinstance(s, upstream.Source) for s in sources):
            return upstream.show(*sources, network=False)
    return None


def missing_excerpts() -> list[str]:
    """The kernel sources notebook 06 shows that the cache lacks (the site shows links)."""
    return [
        f"{source.function} ({source.label})"
        for source in upstream.SOURCES
        if not upstream.cached_path(source).is_file()
    ]


# --- widgets: the first drawing of a panel -----------------------------------------------------


def panel_call(source: str, names: dict[str, str]) -> tuple[Callable, list, dict] | None:
    """The course function a cell's last expression calls, with its literal arguments.

    Keyword arguments that are not literals are dropped (the parameter's default applies); a
    positional one that is not a literal means the default state cannot be drawn: None."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    if not body or not isinstance(body[-1], ast.Expr) or not isinstance(body[-1].value, ast.Call):
        return None
    call = body[-1].value
    target = course_target(call.func, names)
    if target is None:
        return None
    try:
        args = [ast.literal_eval(arg) for arg in call.args]
    except ValueError:
        return None
    kwargs = {}
    for keyword in call.keywords:
        with contextlib.suppress(ValueError):
            kwargs[keyword.arg] = ast.literal_eval(keyword.value)
    try:
        function = resolve(target)
    except (ImportError, AttributeError):
        return None
    return function, args, kwargs


def first_drawing(source: str, names: dict[str, str]) -> str | None:
    """HTML of the panel a cell makes, drawn now in its default state; None if it cannot be.

    Drawn once per process: the site and the decks built together share each drawing."""
    return _first_drawing(source, tuple(sorted(names.items())))


@functools.cache
def _first_drawing(source: str, names: tuple[tuple[str, str], ...]) -> str | None:
    from course.ui import Panel

    found = panel_call(source, dict(names))
    if found is None:
        return None
    function, args, kwargs = found
    if any(name not in inspect.signature(function).parameters for name in kwargs):
        return None
    with (
        own_progress_folder() as folder,
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        panel = function(*args, **kwargs)
        shows_progress = isinstance(panel, Panel) and folder in panel.text.value
    if not isinstance(panel, Panel) or panel.error:
        return None
    if shows_progress:  # the reader's own saved progress: only their machine has it
        return note_html(OWN_PROGRESS_NOTE)
    parts = [note_html(FIRST_DRAWING)]
    if panel.figure is not None:
        png = base64.b64encode(panel.image.value).decode("ascii")
        parts.append(figures.png_html(png, figure_alt(panel.figure)))
    parts.append(panel.text.value)
    return "".join(parts)


@contextlib.contextmanager
def own_progress_folder() -> Iterator[str]:
    """An empty progress folder (course.journal) while a panel is drawn: whatever the build
    machine's learner saved stays off the pages, and nothing a panel records lands there."""
    before = os.environ.get(PROGRESS_ENV)
    with tempfile.TemporaryDirectory(prefix="site-progress-") as folder:
        os.environ[PROGRESS_ENV] = folder
        try:
            yield folder
        finally:
            if before is None:
                os.environ.pop(PROGRESS_ENV, None)
            else:
                os.environ[PROGRESS_ENV] = before


def figure_alt(figure) -> str:
    """What a panel's figure shows (course.figures.figure_alt: its description, titles, axes and
    legend), as the alt text of the widget's first drawing."""
    said = figures.figure_alt(figure)
    return f"The widget's first drawing: {said}" if said else "The widget's first drawing"


def refuse_unnamed_png(output: nbformat.NotebookNode, source: str) -> None:
    """nbconvert writes a PNG-only output as an <img> with no alt text at all; a course figure is
    stored as HTML with its alt (course.figures.figure_html), so a bare PNG is refused, naming
    its cell."""
    data = output.get("data", {})
    if "image/png" in data and "text/html" not in data:
        last = source.strip().splitlines()[-1] if source.strip() else "(empty cell)"
        raise CourseError(
            f"the figure of the cell ending {last!r} is a PNG without alt text: return a course "
            "figure (course.figures.describe says what it shows) and re-execute the notebook"
        )


def note_html(text: str) -> str:
    return f"<p style='color:#1f5fa8'><em>{text}</em></p>"


def static_page_notebook(nb: nbformat.NotebookNode, draw: bool = True) -> nbformat.NotebookNode:
    """A copy fit for a page without a kernel: widgets drawn (if `draw`) or noted, doctor
    output labelled, PyTorch's kernels shown from the cache, marker lines gone from the code.

    Widget state is not stored in the notebooks (scripts/execute_notebooks.py drops it), so an
    exported widget view would be an empty box."""
    nb = copy.deepcopy(nb)
    names = imported_names(nb)
    for cell in nb.cells:
        outputs = cell.get("outputs", [])
        for output in outputs:
            refuse_unnamed_png(output, cell.source)
            data = output.get("data", {})
            if WIDGET_MIME not in data:
                continue
            del data[WIDGET_MIME]
            if not any(mime in data for mime in STATIC_MIMES):
                drawn = first_drawing(cell.source, names) if draw else None
                data.clear()
                data["text/html"] = drawn or note_html(WIDGET_NOTE)
        if outputs and cell_uses(cell, names, "course.doctor"):
            note_data = {"text/html": note_html(BUILD_MACHINE_NOTE)}
            note = nbformat.v4.new_output("display_data", data=note_data)
            cell.outputs = [note, *outputs]
        if cell.cell_type == "code":
            excerpts = upstream_excerpts(cell.source, names)
            if excerpts is not None:
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=excerpts)]
            cell.source = MARKER_LINE.sub("", cell.source)
    return nb


# --- pages ----------------------------------------------------------------------------------------


def read_lessons(notebook_dir: Path, lessons: Iterable[Lesson]) -> list[tuple[Lesson, Path]]:
    """Every catalogued notebook's path; a missing one is an error, never a silent gap."""
    found = [(lesson, notebook_dir / lesson.filename) for lesson in lessons]
    missing = [path.name for _lesson, path in found if not path.exists()]
    if missing:
        raise CourseError(f"catalogued notebooks missing from {notebook_dir}: {', '.join(missing)}")
    return found


def refuse_mermaid(nb: nbformat.NotebookNode, path: Path) -> None:
    """mermaid.js is an ES module: it cannot load from a file:// page, so say so at build time."""
    for cell in nb.cells:
        if cell.cell_type == "markdown" and MERMAID.search(cell.source):
            raise CourseError(
                f"{path.name} has a mermaid diagram, which the offline site cannot render: "
                "draw it in course/figures.py (make assets) and show the PNG instead"
            )


def nav_html(lessons: list[Lesson], index: int, suffix: str, where: str = "top") -> str:
    """Links to the index and to the previous and next lessons (named for screen readers, which
    list a page's navigation landmarks by name)."""
    links = ["<a href='index.html'>&#8593; All lessons</a>"]
    if index > 0:
        before = lessons[index - 1]
        links.append(
            f"<a href='{page_name(before, suffix)}'>&#8592; {html.escape(heading(before))}</a>"
        )
    if index + 1 < len(lessons):
        after = lessons[index + 1]
        links.append(
            f"<a href='{page_name(after, suffix)}'>{html.escape(heading(after))} &#8594;</a>"
        )
    label = f"lessons ({where} of the page)"
    joined = " &nbsp;·&nbsp; ".join(links)
    return f"<nav class='course-nav' aria-label='{label}' style='{NAV_STYLE}'>{joined}</nav>"


def copy_assets(nb: nbformat.NotebookNode, path: Path, out_dir: Path) -> None:
    """Point the notebook's `../assets/NAME` figures at out_dir/assets/NAME, and copy them there.

    (nbconvert embeds only images inside the notebook's own folder.)"""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for _opening, name in ASSET_REF.findall(cell.source):
            source = path.parent.parent / "assets" / name
            if not source.is_file():
                raise CourseError(f"{path.name} shows ../assets/{name}, which does not exist")
            (out_dir / "assets").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, out_dir / "assets" / name)
        cell.source = ASSET_REF.sub(lambda m: f"{m[1]}assets/{m[2]}", cell.source)


def export_page(
    exporter: HTMLExporter, lesson: Lesson, path: Path, out_dir: Path, suffix: str, draw: bool
) -> str:
    """One notebook as HTML, with links to other notebooks pointing at their pages."""
    raw = nbformat.read(path, as_version=4)
    refuse_mermaid(raw, path)
    nb = static_page_notebook(raw, draw)
    copy_assets(nb, path, out_dir)
    resources = {"metadata": {"name": heading(lesson), "path": str(path.parent)}}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return NOTEBOOK_LINK.sub(lambda m: f'href="{m[1]}{suffix}{m[2] or ""}"', body)


def with_nav(page: str, top: str, bottom: str) -> str:
    """The page with a navigation bar at the top of its body and one at the bottom."""
    opening = BODY_TAG.search(page)
    if opening is None:
        raise CourseError("nbconvert's page has no <body> tag: did its template change?")
    page = page[: opening.end()] + top + page[opening.end() :]
    return page.replace("</body>", bottom + "</body>", 1)


def index_page(title: str, lessons: list[Lesson], suffix: str) -> str:
    """The table of contents: number, linked title, the question it answers, time."""
    rows = "\n".join(
        f"<tr><td>{lesson.filename[:2]}</td>"
        f"<td><a href='{page_name(lesson, suffix)}'>{html.escape(lesson.title)}</a></td>"
        f"<td>{html.escape(lesson.question)}</td><td>{lesson.minutes} min</td></tr>"
        for lesson in lessons
    )
    total = sum(lesson.minutes for lesson in lessons)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border-bottom: 1px solid #ddd; padding: .4rem .6rem; text-align: left; }}
td:last-child {{ white-space: nowrap; }}
</style></head>
<body><main><h1>{html.escape(title)}</h1>
<p>Read-only version of the executed notebooks: it works offline. To run the code and use the
widgets, clone the repository and run <code>make lab</code>.</p>
<table><tr><th>#</th><th>Notebook</th><th>Question</th><th>Time</th></tr>
{rows}
</table><p>About {total} minutes in all.</p></main></body></html>
"""


def copy_static(out_dir: Path, web: Path, files: Iterable[str]) -> None:
    """Copy the listed files and folders of node_modules into out_dir/_static."""
    for relative in files:
        source, target = web / relative, out_dir / STATIC / relative
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        else:
            raise CourseError(f"{source} is missing: reinstall with `make web`")


def build(
    exporter: HTMLExporter,
    out_dir: Path,
    suffix: str,
    title: str,
    notebook_dir: Path = NOTEBOOKS,
    lessons: Iterable[Lesson] = LESSONS,
    nav: bool = False,
    draw: bool = True,
) -> list[Path]:
    """Export every catalogued notebook into out_dir plus an index.html; returns the files."""
    found = read_lessons(notebook_dir, lessons)
    ordered = [lesson for lesson, _ in found]
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for position, (lesson, path) in enumerate(found):
        page = export_page(exporter, lesson, path, out_dir, suffix, draw)
        if nav:
            top, bottom = (nav_html(ordered, position, suffix, at) for at in ("top", "bottom"))
            page = with_nav(page, top, bottom)
        target = out_dir / page_name(lesson, suffix)
        target.write_text(page, encoding="utf-8")
        written.append(target)
    index = out_dir / "index.html"
    index.write_text(index_page(title, ordered, suffix), encoding="utf-8")
    return [index, *written]


def site_exporter() -> HTMLExporter:
    """nbconvert's lab page, loading its scripts from _static/."""
    return HTMLExporter(
        template_name="course_lab",
        extra_template_basedirs=[str(TEMPLATES)],
        extra_template_paths=[str(TEMPLATES)],  # course_common.css, focusable_scrollers.js
        embed_images=True,
        **OFFLINE_URLS,
    )


def slides_exporter() -> SlidesExporter:
    """nbconvert's reveal.js deck (white theme: its fonts ship with reveal.js), from _static/.

    A tall slide scrolls inside its own box (course_reveal/course.css) from the start, so
    nbconvert's script that makes it scroll only after the first slide change is left off."""
    return SlidesExporter(
        template_name="course_reveal",
        extra_template_basedirs=[str(TEMPLATES)],
        extra_template_paths=[str(TEMPLATES)],
        embed_images=True,
        reveal_theme="white",
        reveal_url_prefix=f"{STATIC}/reveal.js",
        **OFFLINE_URLS,
    )


def build_site(
    out_dir: Path,
    notebook_dir: Path = NOTEBOOKS,
    lessons: Iterable[Lesson] = LESSONS,
    web: Path | None = None,
    draw: bool = True,
) -> list[Path]:
    """The static HTML course: index.html and NN_name.html pages with their stored outputs.

    `web` is the node_modules to serve scripts from (default: build/node's, installed if
    needed); `draw=False` leaves every widget as a note (quicker, for tests of the structure)."""
    copy_static(out_dir, web or node_modules(), SITE_FILES)
    title = "PyTorch internals: the course"
    exporter = site_exporter()
    return build(exporter, out_dir, ".html", title, notebook_dir, lessons, nav=True, draw=draw)


def build_slides(
    out_dir: Path,
    notebook_dir: Path = NOTEBOOKS,
    lessons: Iterable[Lesson] = LESSONS,
    web: Path | None = None,
    draw: bool = True,
) -> list[Path]:
    """reveal.js decks, one per notebook; headings start slides (scripts/execute_notebooks.py)."""
    copy_static(out_dir, web or node_modules(), SLIDE_FILES)
    title = "PyTorch internals: slides"
    exporter = slides_exporter()
    return build(exporter, out_dir, ".slides.html", title, notebook_dir, lessons, draw=draw)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", action="store_true", help="build the static HTML site")
    parser.add_argument("--slides", action="store_true", help="build reveal.js slide decks")
    parser.add_argument("--out", type=Path, default=BUILD, help="parent folder (default build/)")
    args = parser.parse_args(argv)
    if not (args.site or args.slides):
        parser.error("choose --site, --slides or both")
    try:
        if args.site:
            files = build_site(args.out / "site")
            print(f"site: {len(files)} files in {args.out / 'site'} (open index.html)")
        if args.slides:
            files = build_slides(args.out / "slides")
            print(f"slides: {len(files)} files in {args.out / 'slides'} (open index.html)")
        if missing_excerpts():
            print(
                f"note: not cached, so notebook 06's pages link to them instead: "
                f"{', '.join(missing_excerpts())}; {upstream.FETCH_HINT} and build again"
            )
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
