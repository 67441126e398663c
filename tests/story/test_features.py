"""Feature recovery: the fixed model finds the planted directions, the broken one does not."""

from __future__ import annotations

import pytest
import torch

from course.errors import CourseError
from course.model.data import make_data
from course.model.runs import run
from course.story.features import best_cosines, recovered, recovery_figure


def test_best_cosines_find_planted_directions():
    data = make_data(n_samples=16, d_model=8, n_true=4, active=2)
    decoder = torch.cat([data.features.T * 3, torch.randn(8, 5)], dim=1)  # (d_model, 9)
    cosines = best_cosines(decoder, data.features)
    assert torch.allclose(cosines, torch.ones(4), atol=1e-5)
    assert recovered(cosines) == 1.0
    with pytest.raises(CourseError, match="d_model"):
        best_cosines(torch.randn(5, 9), data.features)


def test_the_fixed_model_recovers_more_features_than_the_broken_one():
    data = make_data(n_samples=1024, d_model=32, n_true=16, active=2)
    kwargs = {"data": data, "steps": 60, "batch_size": 64, "lr": 1e-2}
    broken = run("2.2.1-macos14", "transposed", progress=None, **kwargs).model
    fixed = run("macos15", "transposed", progress=None, **kwargs).model
    broken_cos = best_cosines(broken.decoder.weight, data.features)
    fixed_cos = best_cosines(fixed.decoder.weight, data.features)
    assert fixed_cos.mean() > broken_cos.mean()
    assert recovery_figure({"broken": broken_cos, "fixed": fixed_cos}).axes
