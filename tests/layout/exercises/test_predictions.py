"""Notebook 04's predictions run the real experiment."""

from __future__ import annotations

from course import exercises
from course.exercises import _prediction
from course.layout.suspects import suspects


def test_predictions_run_the_real_experiment():
    assert _prediction("04.transpose_writes").outcome() == "yes: x[1, 0] becomes 100"
    assert _prediction("04.clone_layout").outcome() == "transposed, like .T"
    assert _prediction("04.find_mps_bug").outcome() == "torch.randn(4, 6).T.clone()"


def test_find_mps_bug_is_a_prediction_over_every_suspect():
    prediction = _prediction("04.find_mps_bug")
    assert prediction.choices == tuple(label for label, _ in suspects())
    assert "04.find_mps_bug" not in exercises.all_exercises()
