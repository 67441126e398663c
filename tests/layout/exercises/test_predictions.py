"""Notebook 04's predictions run the real experiment."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.exercises import get
from course.exercises.registry import prediction
from course.layout.suspects import suspects


def test_predictions_run_the_real_experiment():
    assert prediction("04.transpose_writes").outcome() == "yes: x[1, 0] becomes 100"
    assert prediction("04.clone_layout").outcome() == "transposed, like .T"
    assert prediction("04.find_mps_bug").outcome() == "torch.randn(4, 6).T.clone()"


def test_find_mps_bug_is_a_prediction_over_every_suspect():
    assert prediction("04.find_mps_bug").choices == tuple(label for label, _ in suspects())
    with pytest.raises(CourseError, match="no exercise named '04.find_mps_bug'"):
        get("04.find_mps_bug")
