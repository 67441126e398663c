"""The browser run's records (conftest.BrowserReport): what a worker saves is what is read back.

No browser here (`make test` runs it): `make test-browser` splits the suite over two xdist workers
and two pytest calls, and the end-of-run report and the check across notebooks see the other
processes' tests only through these files.
"""

from __future__ import annotations

from tests.accessibility import Finding
from tests.browser import conftest
from tests.browser.conftest import BrowserReport

FINDING = Finding("color-contrast", "serious", "Contrast", ".jp-x", "<div>", "Fix it", "00")


def test_the_run_reads_back_every_session_and_the_report_only_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "RECORDS", tmp_path)
    monkeypatch.setenv(conftest.RUN_VAR, "run")
    monkeypatch.setenv(conftest.SESSION_VAR, "first")
    BrowserReport(labs=[5.0]).save("lab-gw0")
    BrowserReport(
        notebooks={"notebooks/00.ipynb": {"actions": ["slider moved"]}},
        overflows=["00: a panel wider than its cell area: 900 > 800"],
        frame_findings={"notebooks/00.ipynb": [FINDING]},
    ).save("tests/browser/test_jupyterlab.py::test_notebook_runs[00.ipynb]")
    monkeypatch.setenv(conftest.SESSION_VAR, "second")
    BrowserReport(labs=[6.0]).save("lab-alone")

    run = BrowserReport.of_run()
    assert sorted(run.labs) == [5.0, 6.0]
    assert run.notebooks == {"notebooks/00.ipynb": {"actions": ["slider moved"]}}
    assert run.overflows == ["00: a panel wider than its cell area: 900 > 800"]
    assert run.frame_findings == {"notebooks/00.ipynb": [FINDING]}
    second = BrowserReport.of_run(session="second")
    assert second == BrowserReport(labs=[6.0])


def test_a_test_saved_again_in_the_run_replaces_its_record(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "RECORDS", tmp_path)
    monkeypatch.setenv(conftest.RUN_VAR, "run")
    monkeypatch.setenv(conftest.SESSION_VAR, "first")
    node = "tests/browser/test_jupyterlab.py::test_notebook_runs[00.ipynb]"
    BrowserReport(overflows=["before"]).save(node)
    BrowserReport(overflows=["after"]).save(node)
    assert BrowserReport.of_run().overflows == ["after"]
