"""Re-execute course notebooks in place so their stored outputs stay true (`make notebooks`).

Each notebook is run top to bottom in a fresh kernel (the "restart and run all" a learner does),
then normalised: slide metadata derived from headings, volatile metadata dropped, and digests
recorded so `tests/test_notebook_policy.py` can tell when outputs are stale. The digests cover
the notebook's code cells and every course file they depend on (the modules they import, what
those import in turn, and a package's data files such as a kernel's C++ source), one per file,
so a stale notebook says which file changed.

    python scripts/execute_notebooks.py                      # every notebook
    python scripts/execute_notebooks.py notebooks/03_*.ipynb # some
    make notebooks NB=notebooks/03_inside_adam.ipynb         # the same, through make
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course.catalog import (
    COURSE_DIR,
    dependency_files,
    exercise_names,
    imported_modules,
    modules_defining,
    with_dependencies,
)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CELLS = "(code cells)"  # the digest of the notebook's own code, beside the files'


def digests(nb: nbformat.NotebookNode) -> dict[str, str]:
    """A short digest of the notebook's code cells and of each course file its outputs depend on.

    Keys are paths relative to the repository (course/story/plateau.py), so a stale notebook
    names the file to blame."""
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    modules: set[str] = set()
    for source in code:
        modules |= imported_modules(source)
    modules |= modules_defining(set().union(*map(exercise_names, code)))
    found = {CELLS: _digest("\n\x00\n".join(code).encode())}
    for path in dependency_files(with_dependencies(modules)):
        found[path.relative_to(COURSE_DIR.parent).as_posix()] = _digest(path.read_bytes())
    return found


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def stale_parts(nb: nbformat.NotebookNode) -> list[str]:
    """What changed since the outputs were stored: "(code cells)" and course files by path.

    Empty when the stored outputs are fresh; a notebook stored without digests is all stale."""
    recorded = nb.metadata.get("course", {}).get("digests", {})
    now = digests(nb)
    if not recorded:
        return ["everything: no digests stored (executed before they were kept)"]
    return sorted(
        name for name in recorded.keys() | now.keys() if recorded.get(name) != now.get(name)
    )


def slide_type(cell: nbformat.NotebookNode) -> str:
    """Headings start slides (# and ##) or sub-slides (###); everything else follows on."""
    if cell.cell_type == "markdown":
        first = cell.source.lstrip().split("\n", 1)[0]
        if first.startswith(("# ", "## ")):
            return "slide"
        if first.startswith("### "):
            return "subslide"
    return "-"


# Cells tagged this way show numbers of the machine that ran them (a benchmark): a reader's
# own run is the only honest picture, so their outputs are not stored.
MACHINE_SPECIFIC_TAG = "machine-specific"


def is_progress_noise(output: nbformat.NotebookNode) -> bool:
    """A stderr stream made only of progress-bar redraws (each starts with a carriage return)."""
    if output.get("output_type") != "stream" or output.get("name") != "stderr":
        return False
    lines = [line for line in output.get("text", "").split("\n") if line]
    return bool(lines) and all(line.startswith("\r") for line in lines)


def clean_outputs(cell: nbformat.NotebookNode) -> None:
    """Drop what a stored output should not carry: progress redraws, machine-specific numbers."""
    if cell.cell_type != "code":
        return
    if MACHINE_SPECIFIC_TAG in cell.metadata.get("tags", []):
        cell.outputs = []
        return
    cell.outputs = [o for o in cell.outputs if not is_progress_noise(o)]


def normalise(nb: nbformat.NotebookNode) -> None:
    """Deterministic metadata: slides, kernelspec, hash; nothing that changes run to run."""
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        clean_outputs(cell)
        cell.metadata["slideshow"] = {"slide_type": slide_type(cell)}
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata.pop("widgets", None)
    nb.metadata["course"] = {"digests": digests(nb)}


def execute(path: Path) -> float:
    """Run one notebook in place; returns the seconds it took."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    normalise(nb)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = args.paths or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    # the reference runs' checks are not a learner's progress: keep them out of the real journal
    os.environ.setdefault("COURSE_PROGRESS_DIR", tempfile.mkdtemp(prefix="course-progress-"))
    for path in paths:
        print(f"executing {path.name} ...", flush=True)
        print(f"  done in {execute(path):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
