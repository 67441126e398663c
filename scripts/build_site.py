"""Build the read-only course: a static HTML site (`make site`) and reveal.js decks (`make slides`).

Both are made from the notebooks' stored outputs (what `make notebooks` last executed), never by
re-running them, so a build takes seconds and needs no kernel and no network: nbconvert's
templates ship with nbconvert. At view time the pages link a few scripts from public CDNs, as
nbconvert's templates do by default: reveal.js (unpkg.com) and jQuery (cdnjs) for the decks,
MathJax and require.js (cdnjs) for both. Offline, the site's text, code and figures still
show; the decks need reveal.js.

Interactive widgets cannot run without a kernel: their outputs are replaced by a note that says
where to run them (or by the static figure/HTML the output also carries, when it has one).

    python scripts/build_site.py --site              # build/site/index.html + one page per notebook
    python scripts/build_site.py --slides            # build/slides/NN_name.slides.html
    python scripts/build_site.py --site --out /tmp/x # elsewhere (tests do this)
"""

from __future__ import annotations

import argparse
import copy
import html
import re
import sys
from collections.abc import Iterable
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter, SlidesExporter

from course.catalog import LESSONS, Lesson
from course.errors import CourseError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
BUILD = ROOT / "build"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
STATIC_MIMES = ("image/png", "image/svg+xml", "text/html")
WIDGET_NOTE = "Interactive widget: open this notebook in JupyterLab (make lab) to use it."
# Links between notebooks ("Next: [01_x.ipynb](01_x.ipynb)") become links between pages.
NOTEBOOK_LINK = re.compile(r'href="(\d\d_[a-z0-9_]+)\.ipynb(#[^"]*)?"')


def page_name(lesson: Lesson, suffix: str) -> str:
    """NN_name.html (site) or NN_name.slides.html (slides) for notebooks/NN_name.ipynb."""
    return lesson.filename.removesuffix(".ipynb") + suffix


def heading(lesson: Lesson) -> str:
    """ "NN · Title", as each notebook's first cell writes it."""
    return f"{lesson.filename[:2]} · {lesson.title}"


def without_live_widgets(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy where each widget view shows its static fallback, or a note saying where to run it.

    Widget state is not stored in the notebooks (scripts/execute_notebooks.py drops it), so an
    exported widget view would be an empty box."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_MIME not in data:
                continue
            del data[WIDGET_MIME]
            if not any(mime in data for mime in STATIC_MIMES):
                data.clear()
                data["text/html"] = f"<p style='color:#1f5fa8'><em>{WIDGET_NOTE}</em></p>"
    return nb


def read_lessons(notebook_dir: Path, lessons: Iterable[Lesson]) -> list[tuple[Lesson, Path]]:
    """Every catalogued notebook's path; a missing one is an error, never a silent gap."""
    found = [(lesson, notebook_dir / lesson.filename) for lesson in lessons]
    missing = [path.name for _lesson, path in found if not path.exists()]
    if missing:
        raise CourseError(f"catalogued notebooks missing from {notebook_dir}: {', '.join(missing)}")
    return found


def export_page(exporter: HTMLExporter, lesson: Lesson, path: Path, suffix: str) -> str:
    """One notebook as HTML, with links to other notebooks pointing at their pages."""
    nb = without_live_widgets(nbformat.read(path, as_version=4))
    resources = {"metadata": {"name": heading(lesson), "path": str(path.parent)}}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return NOTEBOOK_LINK.sub(lambda m: f'href="{m[1]}{suffix}{m[2] or ""}"', body)


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
<body><h1>{html.escape(title)}</h1>
<p>Read-only version of the executed notebooks. To run the code and use the widgets, clone the
repository and run <code>make lab</code>.</p>
<table><tr><th>#</th><th>Notebook</th><th>Question</th><th>Time</th></tr>
{rows}
</table><p>About {total} minutes in all.</p></body></html>
"""


def build(
    exporter: HTMLExporter,
    out_dir: Path,
    suffix: str,
    title: str,
    notebook_dir: Path = NOTEBOOKS,
    lessons: Iterable[Lesson] = LESSONS,
) -> list[Path]:
    """Export every catalogued notebook into out_dir plus an index.html; returns the files."""
    found = read_lessons(notebook_dir, lessons)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for lesson, path in found:
        target = out_dir / page_name(lesson, suffix)
        target.write_text(export_page(exporter, lesson, path, suffix), encoding="utf-8")
        written.append(target)
    index = out_dir / "index.html"
    index.write_text(index_page(title, [lesson for lesson, _ in found], suffix), encoding="utf-8")
    return [index, *written]


def build_site(out_dir: Path, notebook_dir: Path = NOTEBOOKS, lessons=LESSONS) -> list[Path]:
    """The static HTML course: index.html and NN_name.html pages with their stored outputs."""
    exporter = HTMLExporter(template_name="lab", embed_images=True)
    return build(exporter, out_dir, ".html", "PyTorch internals: the course", notebook_dir, lessons)


def build_slides(out_dir: Path, notebook_dir: Path = NOTEBOOKS, lessons=LESSONS) -> list[Path]:
    """reveal.js decks, one per notebook; headings start slides (scripts/execute_notebooks.py)."""
    exporter = SlidesExporter(embed_images=True, reveal_scroll=True)
    return build(
        exporter, out_dir, ".slides.html", "PyTorch internals: slides", notebook_dir, lessons
    )


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
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
