"""Notebook 07's prediction runs its experiment."""

from __future__ import annotations

from course.exercises import _prediction


def test_cache_lines_runs_the_experiment():
    assert _prediction("07.cache_lines").outcome() == "16: one line per element"
