"""Notebook 06's predictions run their experiment."""

from __future__ import annotations

from course.exercises import registry


def test_predictions_run_the_experiment():
    assert registry.prediction("06.lost_write").outcome() == "its old values, unchanged"
    assert registry.prediction("06.macos15").outcome() == "no: the write arrives"
