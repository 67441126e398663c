"""The balanced loadfile scheduling (tests/balance.py): its units, their weights, the record."""

from __future__ import annotations

from tests import balance


def test_a_learner_copy_run_all_is_a_unit_of_its_own_and_the_rest_are_files():
    run_all = "tests/test_learner_copies.py::test_run_all_completes_in_a_learner_copy[09_x.ipynb]"
    records = "tests/test_learner_copies.py::test_run_all_records_nothing[09_x.ipynb]"
    assert balance.scope(run_all) == balance.scope(records) == "learner copy [09_x.ipynb]"
    assert balance.scope("tests/test_learner_copies.py::test_learner_copies_are_fresh") == (
        "tests/test_learner_copies.py"
    )
    assert balance.scope("notebooks/09_x.ipynb::Cell 3") == "notebooks/09_x.ipynb"
    assert balance.scope("tests/a/test_b.py::test_c[1-2]") == "tests/a/test_b.py"


def test_recorded_times_come_first_then_notebooks_then_the_number_of_tests():
    seconds = {"tests/test_slow.py": 30.0}
    assert balance.weight("tests/test_slow.py", 1, seconds) == 30.0
    assert balance.weight("notebooks/01_x.ipynb", 12, seconds) == balance.NOTEBOOK_WEIGHT
    assert balance.weight("learner copy [01_x.ipynb]", 3, {}) == balance.NOTEBOOK_WEIGHT
    assert balance.weight("tests/test_many.py", 500, {}) > balance.weight("tests/t.py", 5, {})


def test_the_record_round_trips_and_a_broken_one_is_no_record(tmp_path, monkeypatch):
    path = tmp_path / "durations.json"
    monkeypatch.setattr(balance, "DURATIONS", path)
    recorder = balance._Recorder()
    for nodeid, duration in [("tests/test_a.py::x", 1.5), ("tests/test_a.py::y", 2.0)]:
        recorder.pytest_runtest_logreport(
            type("Report", (), {"nodeid": nodeid, "duration": duration})
        )
    recorder.pytest_sessionfinish(None)
    assert balance.recorded(path) == {"tests/test_a.py": 3.5}
    path.write_text("{broken")
    assert balance.recorded(path) == {}
