"""The control runs and the metadata comparison: one variable changed, and Adam really ran."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from course import exercises, journal
from course.errors import CourseError
from course.exercises import check
from course.isolation import experiments
from course.isolation.exercises import controls
from tests.corpus import (
    all_corpora,
    corpus_tests,
)
from tests.isolation.exercises import corpus_controls

CORPORA = tuple(c for c in corpus_controls.CORPORA if c.name != "02.differences")


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_a_control_made_by_hand_says_the_encoder_moved():
    """Only the state of the bench counts, not how it was built."""
    made = all_corpora()["02.contiguous_run"].right["made contiguous by hand"]
    assert "encoder moved" in check("02.contiguous_run", made()).message


def test_a_run_stepped_outside_the_bench_is_told_so():
    cpu32 = experiments.bench(device="cpu")
    cpu32.backward()
    experiments.adam()(list(cpu32.model.parameters())).step()
    assert "The bench must be active" in check("02.float32_run", cpu32).message


def test_the_contiguous_prediction_is_measured():
    assert controls.contiguous_moves() == "yes"


@pytest.fixture
def new_learner(tmp_path, monkeypatch):
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(exercises, "_PREDICTED", {})


def test_what_the_float64_run_changes_is_asked_before_it_runs_and_measured(new_learner):
    """A pick from three is a prediction (committed once), not a check a retry would pass."""
    with pytest.raises(CourseError, match="no exercise named"):
        exercises.get("02.two_variables")
    assert controls.float64_run_changes() == "the dtype and the device"
    assert not exercises.predict("02.two_variables", {"dtype", "device"}).passed  # off the list
    assert exercises.committed("02.two_variables") is None
    exercises.predict("02.two_variables", "only the dtype")
    exercises._PREDICTED.clear()  # a new kernel: the journal keeps the commitment
    assert "already committed to 'only the dtype'" in exercises.predict(
        "02.two_variables", "the dtype and the device"
    )
    assert "the dtype AND the device" in exercises.reveal("02.two_variables")


def test_on_a_device_that_took_float64_only_the_dtype_would_change(monkeypatch):
    monkeypatch.setattr(controls, "emps", SimpleNamespace(DEVICE="cpu"))
    assert controls.float64_run_changes() == "only the dtype"
