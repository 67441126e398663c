"""Every notebook cell's wall time, slowest first, with the 10 s line marked (`make cell-times`).

A learner should never wait on a cell: no cell of a core notebook may take longer than 10 s on two
cores. Two ways to get the times, one report:

    python scripts/time_cells.py                          # run every notebook in a fresh kernel
    python scripts/time_cells.py notebooks/02_*.ipynb     # some
    python scripts/time_cells.py --from-nbval             # what the last nbval run recorded
    ... --summary                                         # only the cells over the line (CI)

The nbval route costs no extra run: loaded as a pytest plugin (the repository's conftest.py),
this module records the call time of every notebook cell nbval tests and, at the end of the
session, writes them to build/cell_times.json. nbval runs the cells one after another in one
kernel, so a cell's call time is what a learner running the notebook top to bottom waits for.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
NBVAL_JSON = Path("build") / "cell_times.json"
LIMIT_S = 10.0
NBVAL_ID = re.compile(r"^(?P<path>.+\.ipynb)::Cell (?P<cell>\d+)$")


@dataclass(frozen=True)
class CellTime:
    """One code cell's wall time; `cell` counts code cells from 0, as nbval's "Cell N" does."""

    notebook: str
    cell: int
    seconds: float
    outcome: str = "passed"

    @property
    def label(self) -> str:
        return f"{Path(self.notebook).stem} cell {self.cell}"


def execute_timed(path: Path, timeout: int = 900) -> list[CellTime]:
    """Run one notebook top to bottom in a fresh kernel, timing each code cell.

    A cell that raises ends the notebook (as "Run All" would); its time is still reported.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    code_numbers = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            code_numbers[index] = len(code_numbers)
    starts: dict[int, float] = {}
    times: list[CellTime] = []

    def started(cell, cell_index: int) -> None:
        starts[cell_index] = time.perf_counter()

    def finished(cell, cell_index: int, execute_reply) -> None:
        ok = execute_reply is not None and execute_reply["content"]["status"] == "ok"
        seconds = time.perf_counter() - starts[cell_index]
        number = code_numbers[cell_index]
        times.append(CellTime(str(path.resolve()), number, seconds, "passed" if ok else "error"))

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_execute=started,
        on_cell_executed=finished,
    )
    try:
        client.execute()
    except CellExecutionError as exc:
        print(f"  {path.name} stopped at an error: {str(exc).splitlines()[-1]}", flush=True)
    return times


def read_nbval(path: Path) -> tuple[dict, list[CellTime]]:
    """The times the nbval plugin recorded, with what it ran on (torch version, date)."""
    if not path.exists():
        raise FileNotFoundError(
            f"{path} not found: run nbval first (`make test` or `make test-notebooks`)"
        )
    data = json.loads(path.read_text())
    cells = [CellTime(**c) for c in data.pop("cells")]
    return data, cells


def first_line(notebook: str, cell: int, root: Path = ROOT) -> str:
    """The cell's first line that is code, to tell the cells apart in the report."""
    import nbformat

    path = Path(notebook) if Path(notebook).is_absolute() else root / notebook
    try:
        nb = nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return ""
    code = [c for c in nb.cells if c.cell_type == "code"]
    if cell >= len(code):
        return ""
    for line in code[cell].source.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped[:60]
    return ""


def summary(times: list[CellTime], limit: float = LIMIT_S) -> str:
    """One line: `N cells, K over 10 s, slowest: 12.3 s 08_case_closed cell 14`."""
    if not times:
        return "0 cells timed"
    slowest = max(times, key=lambda t: t.seconds)
    over = sum(t.seconds > limit for t in times)
    return (
        f"{len(times)} cells, {over} over {limit:g} s, "
        f"slowest: {slowest.seconds:.1f} s {slowest.label}"
    )


def report(
    times: list[CellTime], limit: float = LIMIT_S, only_over: bool = False, root: Path = ROOT
) -> list[str]:
    """Every cell, slowest first, a `---- 10 s ----` line between those over and under."""
    lines = []
    ordered = sorted(times, key=lambda t: t.seconds, reverse=True)
    marked = False
    for t in ordered:
        if not marked and t.seconds <= limit:
            lines.append(f"---- {limit:g} s ----")
            marked = True
            if only_over:
                break
        flag = "" if t.outcome == "passed" else f"  [{t.outcome}]"
        code = first_line(t.notebook, t.cell, root)
        lines.append(f"{t.seconds:7.1f} s  {t.label:<36} {code}{flag}")
    if not marked:
        lines.append(f"---- {limit:g} s ----")
    lines.append(summary(times, limit))
    return lines


# ---- the pytest plugin: nbval's cell times, recorded for free -------------------------------


class NbvalCellTimer:
    """Collects the call duration of every nbval cell item; writes them once, at the end.

    Registered only where reports arrive from every test: the xdist controller, or the single
    process without xdist (workers send their reports to the controller, so none is counted twice).
    """

    def __init__(self, rootpath: Path, jobs: object) -> None:
        self.out = rootpath / NBVAL_JSON
        self.jobs = jobs
        self.cells: list[CellTime] = []

    def pytest_runtest_logreport(self, report) -> None:
        match = NBVAL_ID.match(report.nodeid)
        if report.when != "call" or match is None:
            return
        self.cells.append(
            CellTime(match["path"], int(match["cell"]), round(report.duration, 3), report.outcome)
        )

    def pytest_sessionfinish(self, session) -> None:
        if not self.cells:
            return  # no notebook ran: keep the last notebook run's times
        try:
            torch = metadata.version("torch")
        except metadata.PackageNotFoundError:
            torch = "not installed"
        data = {
            "torch": torch,
            "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "xdist_workers": self.jobs,
            "cells": [asdict(c) for c in sorted(self.cells, key=lambda c: (c.notebook, c.cell))],
        }
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.out.write_text(json.dumps(data, indent=1) + "\n")


def pytest_configure(config) -> None:
    if not hasattr(config, "workerinput"):
        jobs = config.getoption("numprocesses", default=None)
        config.pluginmanager.register(NbvalCellTimer(config.rootpath, jobs), "course-cell-times")


# ---- the command line ------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks to run (default: all)")
    parser.add_argument(
        "--from-nbval",
        nargs="?",
        const=ROOT / NBVAL_JSON,
        type=Path,
        metavar="JSON",
        help=f"report what the last nbval run recorded (default {NBVAL_JSON})",
    )
    parser.add_argument("--limit", type=float, default=LIMIT_S, help="the line, in seconds")
    parser.add_argument("--summary", action="store_true", help="only the cells over the line")
    args = parser.parse_args(argv)
    if args.from_nbval is not None:
        try:
            info, times = read_nbval(args.from_nbval)
        except FileNotFoundError as exc:
            print(exc, file=sys.stderr)
            return 2
        print(f"cell times from nbval, torch {info['torch']}, {info['written']}")
    else:
        os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        times = []
        for path in args.paths or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
            print(f"running {path.name} ...", flush=True)
            times += execute_timed(path)
    print("\n".join(report(times, args.limit, only_over=args.summary)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
