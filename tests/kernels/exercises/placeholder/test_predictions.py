"""Notebook 06's predictions run their experiment."""

from __future__ import annotations

from course.exercises import registry
from course.kernels.exercises.placeholder import predictions


def test_predictions_run_the_experiment():
    assert registry.prediction("06.lost_write").outcome() == predictions.DROPPED
    assert (
        registry.prediction("06.macos15").outcome()
        == "no copy is made: the graph writes into out itself"
    )
