"""Fixtures shared by the exercise machinery's tests (tests/test_exercises.py imports them too)."""

from __future__ import annotations

import pytest

from course import exercises, journal
from course.exercises import registry


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A private journal and a fresh session: no hint seen, not in instructor mode."""
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(exercises, "_HINTS_SEEN", set())
    monkeypatch.setitem(exercises._INSTRUCTOR, "on", False)
    return tmp_path


@pytest.fixture
def careful(fresh, monkeypatch):
    """A checker that catches the learner's exceptions itself, as many do per variant."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    def checker(fn):
        try:
            return exercises.passed("ok") if fn(2) == 4 else exercises.failed("wrong", fn(2), 4)
        except Exception as exc:
            return exercises.failed(f"on 2 your function raised {type(exc).__name__}: {exc}")

    exercises.register(exercises.Exercise("99.square", "p", checker, "h", 2))
    return fresh
