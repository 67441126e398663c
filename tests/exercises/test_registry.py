"""The registry: names lead to their lesson, and a check loads its own lesson only."""

from __future__ import annotations

import subprocess
import sys

import pytest

from course import catalog
from course.errors import CourseError
from course.exercises import passed, registry
from course.exercises.registry import Exercise, Prediction


def test_a_name_leads_to_its_lesson():
    assert registry.lesson_of("04.address").filename == "04_strides.ipynb"
    assert registry.get("04.address").lesson is registry.lesson_of("04.address")
    assert registry.lesson_of("00.anything") is catalog.LESSONS[0]


@pytest.mark.parametrize("name", ["99.address", "04", "address", "", 4])
def test_a_name_without_a_lesson_is_refused(name):
    with pytest.raises(CourseError, match="not an exercise name"):
        registry.lesson_of(name)


def test_get_loads_only_its_own_lesson():
    code = (
        "import sys\n"
        "from course.exercises import registry\n"
        "registry.get('04.address')\n"
        "assert 'course.layout.exercises' in sys.modules\n"
        "assert 'course.adam' not in sys.modules, 'lesson 03 loaded'\n"
        "assert 'course.dispatch' not in sys.modules, 'lesson 05 loaded'\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr


@pytest.fixture
def private(monkeypatch):
    """Registries of this test's own, forgotten afterwards."""
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_PREDICTIONS", {})


@pytest.mark.parametrize("minutes", [0, 61, 2.5, "5"])
def test_minutes_must_be_a_whole_number_from_1_to_60(private, minutes):
    with pytest.raises(CourseError, match="minutes must be a whole number"):
        registry.register(Exercise("99.slow", "p", passed, "h", minutes))
    assert registry.register(Exercise("99.slow", "p", passed, "h", 60)).minutes == 60


def test_a_name_is_a_prediction_or_an_exercise_never_both(private):
    registry.register_prediction(Prediction("99.coin", "?", ("heads", "tails"), str, "e"))
    registry.register(Exercise("99.square", "p", passed, "h", 2))
    with pytest.raises(CourseError, match="is a prediction already"):
        registry.register(Exercise("99.coin", "p", passed, "h", 2))
    with pytest.raises(CourseError, match="is a checked exercise already"):
        registry.register_prediction(Prediction("99.square", "?", ("a", "b"), str, "e"))
