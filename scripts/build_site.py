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
import math
import os
import re
import shutil
import struct
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from html.parser import HTMLParser
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


# --- decks: every slide fits the screen -----------------------------------------------------------
#
# A deck is laid out on a 1280x720 canvas (a projector's screen; reveal.js scales it to the window)
# and no slide may scroll: text is read from across a room, where nobody can scroll a box. So the
# build splits a notebook into slides by an estimate of each part's height: a heading starts a
# slide, as in the notebook; a slide that would grow past the screen goes on in a slide below it
# (a sub-slide: the next key press shows it), and a cell that is taller than a slide is cut
# between lines (code, printed text) or paragraphs (markdown). A printed output longer than
# EXCERPT_SLIDES slides shows its start and links to the site's page for the rest. Printed text
# tables wider than the slide are cut between their columns into narrower tables, one under the
# other. tests/test_site_offline.py measures every slide in Chromium.

DECK_WIDTH, DECK_HEIGHT = 1280, 720
SLIDE_BUDGET = 600  # px of content a slide holds (its padding and reveal.js's margin aside)
CODE_LINE, CODE_CHARS = 21.5, 120  # 16 px monospace (course_reveal/course.css)
PROSE_LINE, PROSE_CHARS = 32, 115  # 20 px prose
HEADING = {1: 90, 2: 70, 3: 55, 4: 45}
CODE_BOX = 26  # an input box's padding and margins
OUTPUT_BOX = 12
IMAGE_MAX_HEIGHT = 520  # course_reveal/course.css caps an output's figure at this height
IMAGE_MAX_WIDTH = 1200
EXCERPT_SLIDES = 2
CONTINUED = "subslide"
IMG_DATA = re.compile(r"""<img[^>]*src=["']data:image/png;base64,([A-Za-z0-9+/=]+)""")
ASSET_PNG = re.compile(r"""(?:\]\(|src=["'])\.\./assets/([\w.-]+\.png)""")
TAG = re.compile(r"<[^>]+>")
FENCE = re.compile(r"^\s*(```|~~~)")


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's width and height in pixels, from its header (0, 0 if it is not a PNG)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return 0, 0
    return struct.unpack(">II", data[16:24])


def image_height(width: int, height: int) -> float:
    """How tall a figure of this size is drawn on a slide (scaled down to fit, never up)."""
    if not (width and height):
        return 0.0
    return height * min(1.0, IMAGE_MAX_WIDTH / width, IMAGE_MAX_HEIGHT / height)


def wrapped_lines(text: str, chars: int) -> int:
    """Lines `text` takes in a box `chars` characters wide."""
    return sum(max(1, math.ceil(len(line) / chars)) for line in text.split("\n"))


def html_height(markup: str) -> float:
    """A rough height of an HTML output: its figures, table rows, preformatted and other text."""
    height = 0.0
    for encoded in IMG_DATA.findall(markup):
        height += image_height(*png_size(base64.b64decode(encoded[:64] + "=" * 4)[:24]))
    rows = len(re.findall(r"<tr[\s>]", markup))
    height += rows * (CODE_LINE + 10)
    for pre in re.findall(r"<pre[^>]*>(.*?)</pre>", markup, re.S):
        height += wrapped_lines(html.unescape(TAG.sub("", pre)).strip("\n"), CODE_CHARS) * CODE_LINE
    rest = re.sub(r"<pre[^>]*>.*?</pre>|<table.*?</table>", "", markup, flags=re.S)
    blocks = re.split(r"<(?:p|div|li|br|dt|dd|h\d)[\s>/]", rest)
    text = "\n".join(
        html.unescape(TAG.sub("", b)).strip() for b in blocks if TAG.sub("", b).strip()
    )
    if text.strip():
        height += wrapped_lines(text, PROSE_CHARS) * PROSE_LINE
    return height + OUTPUT_BOX


def output_height(output: nbformat.NotebookNode) -> float:
    """A rough height of one output on a slide."""
    if output.output_type == "stream":
        return wrapped_lines(output.text.rstrip("\n"), CODE_CHARS) * CODE_LINE + OUTPUT_BOX
    if output.output_type == "error":
        traceback = "\n".join(output.get("traceback", []))
        return wrapped_lines(traceback, CODE_CHARS) * CODE_LINE + OUTPUT_BOX
    data = output.get("data", {})
    if "image/png" in data:
        raw = base64.b64decode(data["image/png"][:64] + "=" * 4)[:24]
        width, height = png_size(raw)
        meta = output.get("metadata", {}).get("image/png", {})
        width, height = meta.get("width", width), meta.get("height", height)
        return image_height(width, height) + OUTPUT_BOX
    if "text/html" in data:
        return html_height(data["text/html"])
    if "image/svg+xml" in data:
        return IMAGE_MAX_HEIGHT
    text = data.get("text/plain", "")
    return wrapped_lines(text.rstrip("\n"), CODE_CHARS) * CODE_LINE + OUTPUT_BOX


def markdown_blocks(source: str) -> list[str]:
    """A markdown cell's paragraphs (a fenced code block stays whole)."""
    blocks, current, fenced = [], [], False
    for line in source.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                blocks.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def asset_height(name: str, notebook_dir: Path) -> float:
    path = notebook_dir.parent / "assets" / name
    return image_height(*png_size(path.read_bytes()[:24])) if path.is_file() else IMAGE_MAX_HEIGHT


def markdown_height(block: str, notebook_dir: Path) -> float:
    """A rough height of one markdown paragraph, heading, list, table, code block or figure."""
    first = block.lstrip().split("\n", 1)[0]
    level = len(first) - len(first.lstrip("#"))
    if level and first[level : level + 1] == " ":
        rest = block.lstrip().split("\n", 1)[1] if "\n" in block.strip() else ""
        return HEADING.get(level, 45) + (markdown_height(rest, notebook_dir) if rest else 0)
    height = sum(asset_height(name, notebook_dir) for name in ASSET_PNG.findall(block))
    if FENCE.match(first):
        return height + (block.count("\n") - 1) * CODE_LINE + CODE_BOX
    lines = [line for line in block.split("\n") if not ASSET_PNG.search(line)]
    if lines and all(line.lstrip().startswith("|") for line in lines):
        rows = [line for line in lines if not re.match(r"^\s*\|[\s:|-]+\|\s*$", line)]
        return height + sum(
            max(1, math.ceil(len(line) / PROSE_CHARS)) * PROSE_LINE for line in rows
        )
    text = "\n".join(lines)
    return height + wrapped_lines(text, PROSE_CHARS) * PROSE_LINE + 16 if text.strip() else height


RULE_LINE = re.compile(r"^[\s\-=─┼+|]*$")  # a table's rule: cut like the rest, never a guide


def column_gaps(lines: list[str]) -> list[int]:
    """Where a printed table's columns meet: positions blank, with the one before, in every line
    (or past its end), where some line's next column starts."""
    rows = [line for line in lines if not RULE_LINE.match(line)]
    width = max(len(line) for line in rows)
    return [
        at
        for at in range(1, width - 1)
        if all(len(line) <= at or line[at - 1 : at + 1] == "  " for line in rows)
        and any(len(line) > at + 1 and line[at + 1] != " " for line in rows)
    ]


def fold_table(text: str, chars: int = CODE_CHARS) -> str:
    """A printed table wider than `chars`, cut between its columns into narrower tables one under
    the other, each led by the first column (the rows' names); other text is left as it is (the
    slide wraps it between words)."""
    lines = text.split("\n")
    longest = max(len(line) for line in lines)
    if longest <= chars or sum(1 for line in lines if line.strip()) < 2:
        return text
    gaps = column_gaps([line for line in lines if line.strip()])
    if not gaps or gaps[0] > chars // 2:
        return text
    label = gaps[0]

    def filled_to(at: int) -> int:  # where the blank columns before `at` start
        while at > 0 and all(len(line) < at or line[at - 1] == " " for line in lines):
            at -= 1
        return at

    parts, start = [], label
    while longest - start + label > chars:
        ends = [at for at in gaps if start < at and filled_to(at) - start + label <= chars]
        if not ends:
            return text
        parts.append((start, ends[-1]))
        start = ends[-1]
    parts.append((start, longest))
    out: list[str] = []
    for number, (start, end) in enumerate(parts):
        out += [""] if number else []
        out += [(line[:label] + line[start:end]).rstrip() if line.strip() else "" for line in lines]
    return "\n".join(out)


VOID_TAGS = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class _TopLevel(HTMLParser):
    """Where each top-level element of an HTML fragment starts and ends (character offsets)."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.lines = [0]
        for line in markup.split("\n")[:-1]:
            self.lines.append(self.lines[-1] + len(line) + 1)
        self.depth, self.cuts = 0, [0]
        self.feed(markup)
        self.close()

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.lines[line - 1] + column

    def handle_starttag(self, tag, attrs):
        if self.depth == 0:
            self.cuts.append(self._offset())
        if tag not in VOID_TAGS:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag not in VOID_TAGS:
            self.depth = max(0, self.depth - 1)


def html_blocks(markup: str) -> list[str]:
    """An HTML fragment cut between its top-level elements; a top-level <div> taller than a slide
    is cut between its own children (a row of columns becomes columns one under the other)."""
    cuts = sorted(set(_TopLevel(markup).cuts + [len(markup)]))
    blocks = [markup[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if markup[a:b].strip()]
    out = []
    for block in blocks:
        inner = re.fullmatch(r"\s*<(div|dl|ul|ol)[^>]*>(.*)</\1>\s*", block, re.S)
        if len(blocks) > 1 and inner and html_height(block) > SLIDE_BUDGET:
            parts = html_blocks(inner[2])
            out += parts if len(parts) > 1 else [block]
        else:
            out.append(block)
    return out


class _Piece:
    """Part of a cell on a slide: some of its source lines, or one of its outputs (or part)."""

    def __init__(self, cell: int, height: float, source: str | None = None, output=None):
        self.cell, self.height, self.source, self.output = cell, height, source, output


def cell_pieces(index: int, cell: nbformat.NotebookNode, notebook_dir: Path) -> list[_Piece]:
    """A cell cut where a slide may end: between paragraphs, lines of code or printed lines."""
    per_slide = int(SLIDE_BUDGET // CODE_LINE) - 2
    if cell.cell_type == "markdown":
        return [
            _Piece(index, markdown_height(block, notebook_dir), source=block)
            for block in markdown_blocks(cell.source)
        ]
    if cell.cell_type != "code":
        return [_Piece(index, PROSE_LINE, source=cell.source)]
    pieces = []
    lines = cell.source.rstrip("\n").split("\n")
    if cell.source.strip():
        for at in range(0, len(lines), per_slide):
            chunk = "\n".join(lines[at : at + per_slide])
            height = wrapped_lines(chunk, CODE_CHARS) * CODE_LINE + CODE_BOX
            pieces.append(_Piece(index, height, source=chunk))
    for output in cell.get("outputs", []):
        height = output_height(output)
        markup = output.get("data", {}).get("text/html")
        if markup is not None and height > SLIDE_BUDGET:
            for block in html_blocks(markup):
                part = nbformat.v4.new_output("display_data", data={"text/html": block})
                pieces.append(_Piece(index, html_height(block), output=part))
            continue
        if output.output_type != "stream":
            pieces.append(_Piece(index, height, output=output))
            continue
        text = fold_table(output.text.rstrip("\n"))
        printed = text.split("\n")
        shown = per_slide * EXCERPT_SLIDES
        for at in range(0, min(len(printed), shown), per_slide):
            part = nbformat.v4.new_output(
                "stream", name=output.name, text="\n".join(printed[at : at + per_slide]) + "\n"
            )
            pieces.append(_Piece(index, output_height(part), output=part))
        if len(printed) > shown:
            note = nbformat.v4.new_output("display_data", data={"text/html": "EXCERPT"})
            note.metadata["course_left"] = len(printed) - shown
            pieces.append(_Piece(index, PROSE_LINE * 2, output=note))
    return pieces


def excerpt_note(left: int, site_page: str) -> str:
    return note_html(
        f"… and {left} more lines: see <a href='../site/{site_page}'>this page of the site</a> "
        "(make site) for all of them."
    )


def fit_slides(
    nb: nbformat.NotebookNode, notebook_dir: Path, site_page: str
) -> nbformat.NotebookNode:
    """The notebook cut into slides that each fit a 1280x720 screen (see above)."""
    groups: list[tuple[str, list[_Piece]]] = []
    height = 0.0
    for index, cell in enumerate(nb.cells):
        kind = cell.metadata.get("slideshow", {}).get("slide_type", "-")
        if kind in ("slide", "subslide") or not groups:
            groups.append((kind if kind in ("slide", "subslide") else "slide", []))
            height = 0.0
        for piece in cell_pieces(index, cell, notebook_dir):
            if groups[-1][1] and height + piece.height > SLIDE_BUDGET:
                groups.append((CONTINUED, []))
                height = 0.0
            groups[-1][1].append(piece)
            height += piece.height
    cells, emitted = [], {}
    for kind, pieces in groups:
        runs: list[list[_Piece]] = []
        for piece in pieces:
            if runs and runs[-1][0].cell == piece.cell:
                runs[-1].append(piece)
            else:
                runs.append([piece])
        for number, run in enumerate(runs):
            original = nb.cells[run[0].cell]
            cell = copy.deepcopy(original)
            times = emitted[run[0].cell] = emitted.get(run[0].cell, 0) + 1
            if times > 1 and "id" in cell:
                cell.id = f"{original.id}-{times}"[:64]
            sources = [piece.source for piece in run if piece.source is not None]
            joiner = "\n\n" if cell.cell_type == "markdown" else "\n"
            cell.source = joiner.join(sources)
            if cell.cell_type == "code":
                cell.outputs = [piece.output for piece in run if piece.output is not None]
                for output in cell.outputs:
                    left = output.get("metadata", {}).pop("course_left", None)
                    if left is not None:
                        output.data["text/html"] = excerpt_note(left, site_page)
                if not sources:
                    cell.metadata.setdefault("transient", {})["remove_source"] = True
            cell.metadata["slideshow"] = {"slide_type": kind if number == 0 else "-"}
            cells.append(cell)
    nb = copy.copy(nb)
    nb.cells = cells
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
    if isinstance(exporter, SlidesExporter):
        nb = fit_slides(nb, path.parent, page_name(lesson, ".html"))
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
        reveal_width=str(DECK_WIDTH),
        reveal_height=str(DECK_HEIGHT),
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
