"""scripts/time_cells.py: cell times from nbclient and from nbval, slowest first, 10 s line marked.

The two routes run a tiny generated notebook for real (one kernel each); the report is checked on
made-up times, so no test depends on how fast this machine is.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import nbformat
import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("time_cells", ROOT / "scripts/time_cells.py")
time_cells = importlib.util.module_from_spec(_spec)
sys.modules["time_cells"] = time_cells  # dataclasses resolve their module by name
_spec.loader.exec_module(time_cells)
CellTime = time_cells.CellTime


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """Three code cells (the second sleeps) around a markdown cell, like a lesson in miniature."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import time"),
        nbformat.v4.new_markdown_cell("# a heading"),
        nbformat.v4.new_code_cell("# a comment first\ntime.sleep(0.5)"),
        nbformat.v4.new_code_cell("x = 1"),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "01_tiny.ipynb"
    nbformat.write(nb, path)
    return path


def made_up() -> list:
    return [
        CellTime("notebooks/01_a.ipynb", 0, 0.2),
        CellTime("notebooks/08_case_closed.ipynb", 14, 31.2),
        CellTime("notebooks/02_b.ipynb", 3, 10.0),
        CellTime("notebooks/02_b.ipynb", 5, 12.3, "failed"),
    ]


def test_report_orders_slowest_first_and_marks_the_line() -> None:
    lines = time_cells.report(made_up(), root=ROOT)
    assert lines[0].split()[:4] == ["31.2", "s", "08_case_closed", "cell"]
    assert "[failed]" in lines[1] and "12.3 s" in lines[1]
    assert lines[2] == "---- 10 s ----"  # exactly 10.0 s is not over the line
    assert "10.0 s" in lines[3] and "0.2 s" in lines[4]
    assert lines[-1] == "4 cells, 2 over 10 s, slowest: 31.2 s 08_case_closed cell 14"


def test_summary_mode_stops_at_the_line() -> None:
    lines = time_cells.report(made_up(), only_over=True, root=ROOT)
    assert len(lines) == 4 and lines[2] == "---- 10 s ----"
    assert time_cells.report([], root=ROOT) == ["---- 10 s ----", "0 cells timed"]


def test_line_comes_first_when_every_cell_is_fast() -> None:
    lines = time_cells.report([CellTime("n/03_c.ipynb", 1, 0.5)], root=ROOT)
    assert lines[0] == "---- 10 s ----"
    assert lines[-1] == "1 cells, 0 over 10 s, slowest: 0.5 s 03_c cell 1"


def test_first_line_skips_comments_and_counts_code_cells(tiny: Path) -> None:
    assert time_cells.first_line(str(tiny), 1) == "time.sleep(0.5)"
    assert time_cells.first_line(str(tiny), 7) == ""
    assert time_cells.first_line(str(tiny.parent / "missing.ipynb"), 0) == ""


def test_nbclient_route_times_every_code_cell(tiny: Path) -> None:
    times = time_cells.execute_timed(tiny, timeout=120)
    assert [t.cell for t in times] == [0, 1, 2]
    assert max(times, key=lambda t: t.seconds).cell == 1  # the one that sleeps
    assert times[1].seconds >= 0.5 and all(t.outcome == "passed" for t in times)
    lines = time_cells.report(times, limit=0.4)
    assert "time.sleep(0.5)" in lines[0] and lines[1] == "---- 0.4 s ----"


def test_nbclient_route_reports_the_cell_that_raised(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1 / 0"), nbformat.v4.new_code_cell("never = 1")]
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, path)
    times = time_cells.execute_timed(path, timeout=120)
    assert [(t.cell, t.outcome) for t in times] == [(0, "error")]


def test_nbval_route_records_cell_times(pytester: pytest.Pytester, tiny: Path) -> None:
    """What `make test` records: nbval's call time of each cell, written once at the end."""
    nb = pytester.path / tiny.name
    nb.write_bytes(tiny.read_bytes())
    result = pytester.runpytest_inprocess(
        "--nbval-lax",
        "--nbval-current-env",
        "-p",
        "no:cacheprovider",
        nb.name,
        plugins=[time_cells],
    )
    result.assert_outcomes(passed=3)
    json_path = pytester.path / "build/cell_times.json"
    info, times = time_cells.read_nbval(json_path)
    assert info["torch"] and info["xdist_workers"] is None
    assert [(t.notebook, t.cell) for t in times] == [(nb.name, 0), (nb.name, 1), (nb.name, 2)]
    assert max(times, key=lambda t: t.seconds).cell == 1
    lines = time_cells.report(times, limit=0.4, only_over=True, root=pytester.path)
    assert lines[0].endswith("01_tiny cell 1                       time.sleep(0.5)")
    assert lines[1:] == ["---- 0.4 s ----", lines[-1]]
    assert lines[-1].startswith("3 cells, 1 over 0.4 s, slowest: ")


class FakeConfig:
    def __init__(self, worker: bool) -> None:
        if worker:
            self.workerinput = {"workerid": "gw0"}
        self.rootpath = Path("/nowhere")
        self.registered: list = []
        self.pluginmanager = self

    def getoption(self, name: str, default: object = None) -> object:
        return 2

    def register(self, plugin: object, name: str) -> None:
        self.registered.append(plugin)


def test_under_xdist_only_the_controller_records() -> None:
    """Workers send every report on to the controller: counting there counts each cell once."""
    worker, controller = FakeConfig(worker=True), FakeConfig(worker=False)
    time_cells.pytest_configure(worker)
    time_cells.pytest_configure(controller)
    assert worker.registered == []
    assert [type(p).__name__ for p in controller.registered] == ["NbvalCellTimer"]
    assert controller.registered[0].jobs == 2


def test_command_line_summary(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    timer = time_cells.NbvalCellTimer(tmp_path, 2)
    for cell, seconds in [(0, 0.1), (1, 12.5)]:
        timer.cells.append(CellTime("notebooks/02_isolating.ipynb", cell, seconds))
    timer.pytest_sessionfinish(session=None)
    assert (
        time_cells.main(["--from-nbval", str(tmp_path / "build/cell_times.json"), "--summary"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("cell times from nbval, torch ")
    assert lines[-2:] == [
        "---- 10 s ----",
        "2 cells, 1 over 10 s, slowest: 12.5 s 02_isolating cell 1",
    ]
    assert len(lines) == 4


def test_missing_nbval_times_say_what_to_run(tmp_path: Path) -> None:
    assert time_cells.main(["--from-nbval", str(tmp_path / "none.json")]) == 2
    with pytest.raises(FileNotFoundError, match="make test"):
        time_cells.read_nbval(tmp_path / "none.json")


def test_unit_test_runs_leave_the_last_notebook_times_alone(tmp_path: Path) -> None:
    timer = time_cells.NbvalCellTimer(tmp_path, None)
    timer.pytest_sessionfinish(session=None)
    assert not (tmp_path / "build").exists()
    report = type("R", (), {"nodeid": "nb/05_x.ipynb::Cell 2", "when": "call"})()
    report.duration, report.outcome = 1.25, "passed"
    timer.pytest_runtest_logreport(report)
    timer.pytest_sessionfinish(session=None)
    data = json.loads((tmp_path / "build/cell_times.json").read_text())
    assert data["cells"] == [
        {"notebook": "nb/05_x.ipynb", "cell": 2, "seconds": 1.25, "outcome": "passed"}
    ]
