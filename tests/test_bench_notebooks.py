"""benchmarks/bench_notebooks.py without running a kernel: which notebooks, and its report line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest

from scripts.time_cells import CellTime

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_notebooks.py"
SPEC = importlib.util.spec_from_file_location("bench_notebooks", PATH)
bench = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench)


@pytest.fixture
def folder(tmp_path):
    for name in ("00_start_here", "01_the_plateau", "09_case_closed"):
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell("# set-up\nimport torch"),
            nbformat.v4.new_code_cell("run()"),
        ]
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
    (tmp_path / "notes.ipynb").write_text("{}")
    return tmp_path


def test_notebooks_are_picked_by_number_or_name(folder):
    assert [p.stem for p in bench.chosen([], folder)] == [
        "00_start_here",
        "01_the_plateau",
        "09_case_closed",
    ]
    assert [p.stem for p in bench.chosen(["01", "09_case"], folder)] == [
        "01_the_plateau",
        "09_case_closed",
    ]


def test_an_unknown_notebook_is_refused_with_the_names_there_are(folder):
    with pytest.raises(SystemExit, match="no notebook starts with 42; there are: 00_start_here"):
        bench.chosen(["42"], folder)


def test_the_line_names_the_slowest_cell_by_its_first_line_of_code(folder):
    path = folder / "01_the_plateau.ipynb"
    cells = [CellTime(str(path), 0, 2.0), CellTime(str(path), 1, 5.5)]
    line = bench.NotebookTime(path, "learner", 9.25, cells).line()
    assert line.startswith("01_the_plateau               learner      9.2 s (cells   7.5 s)")
    assert line.endswith("slowest   5.5 s: cell 1, run()")
    first = bench.NotebookTime(path, "reference", 3.0, [CellTime(str(path), 0, 2.0, "error")])
    assert first.line().endswith("cell 0, import torch  [stopped at an error]")
    assert bench.NotebookTime(path, "learner", 1.0, []).line().endswith("no cell ran")
