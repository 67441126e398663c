"""How long each notebook's "Run All" takes, learner copy and reference, and its slowest cell.

    python benchmarks/bench_notebooks.py                    # every notebook, both copies
    python benchmarks/bench_notebooks.py 01 09              # notebooks by number (or name)
    python benchmarks/bench_notebooks.py --copies learner   # only the learner copies

Each notebook runs top to bottom in a fresh kernel (nbclient with the course's "python3"
kernel, started in the notebook's own folder), as a learner's "Run All" does: the learner copy
from learner/, with its exercises unattempted, and the reference from notebooks/, answers in.
Each cell is timed as scripts/time_cells.py times it (its `execute_timed`); the progress journal
is a private temporary one, so no learner's progress changes. Printed per run: the wall time
from starting the kernel to the last cell, the time of the cells alone, and the slowest cell
(its first line of code and seconds), with the machine and its load average before and after:
wall times on a busy machine stretch with the load. Nothing is asserted: a benchmark reports, a
reader judges.
Run it from the repository root with the repository on PYTHONPATH, as `make` does.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from course.journal import ENV_DIR
from course.kernels.cpp.tuning import cpu_model
from scripts.time_cells import CellTime, execute_timed, first_line

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"learner": ROOT / "learner", "reference": ROOT / "notebooks"}


class NotebookTime(NamedTuple):
    """One Run All: its wall time (kernel start included) and every code cell's time."""

    path: Path
    copy: str
    wall: float
    cells: list[CellTime]

    @property
    def slowest(self) -> CellTime | None:
        return max(self.cells, key=lambda c: c.seconds, default=None)

    def line(self) -> str:
        """'01_the_plateau  learner    13.2 s (cells 11.9 s)  slowest 4.1 s: run(...)'"""
        cells = sum(c.seconds for c in self.cells)
        stopped = any(c.outcome != "passed" for c in self.cells)
        head = f"{self.path.stem:<28} {self.copy:<9} {self.wall:6.1f} s (cells {cells:5.1f} s)"
        slow = self.slowest
        if slow is None:
            return f"{head}  no cell ran"
        code = first_line(str(slow.notebook), slow.cell) or "(comments only)"
        flag = "  [stopped at an error]" if stopped else ""
        return f"{head}  slowest {slow.seconds:5.1f} s: cell {slow.cell}, {code}{flag}"


def chosen(names: list[str], folder: Path) -> list[Path]:
    """The notebooks in `folder` whose file name starts with one of `names` (all without)."""
    found = sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    if not names:
        return found
    picked = [path for path in found if any(path.name.startswith(name) for name in names)]
    if not picked:
        known = ", ".join(path.stem for path in found)
        raise SystemExit(f"no notebook starts with {' or '.join(names)}; there are: {known}")
    return picked


def run(path: Path, copy: str) -> NotebookTime:
    """One Run All of one notebook, timed."""
    start = time.perf_counter()
    cells = execute_timed(path)
    return NotebookTime(path, copy, time.perf_counter() - start, cells)


def load() -> str:
    """'load average 1.2, 0.9, 0.7' (1, 5 and 15 minutes), where the system tells it."""
    try:
        return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except (OSError, AttributeError):  # AttributeError: Windows has no getloadavg
        return "load average unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="numbers or names, e.g. 01 09_case")
    parser.add_argument(
        "--copies", choices=("both", *FOLDERS), default="both", help="which copies to run"
    )
    args = parser.parse_args(argv)
    copies = list(FOLDERS) if args.copies == "both" else [args.copies]
    # Inherited by each kernel: a private journal, figures drawn inline as in Jupyter.
    os.environ[ENV_DIR] = tempfile.mkdtemp(prefix="bench-notebooks-")
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    print(f"{cpu_model()}, {os.cpu_count()} cores; {load()} before", flush=True)
    for path in chosen(args.notebooks, FOLDERS["reference"]):
        for copy in copies:
            print(run(FOLDERS[copy] / path.name, copy).line(), flush=True)
    print(f"wall: from starting the kernel to the end of the last cell; {load()} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
