"""The synthetic data: seeded, sparse, built from known unit directions."""

from __future__ import annotations

import pytest
import torch

from course.errors import CourseError
from course.model.data import make_data


def test_data_are_seeded_and_built_from_unit_features():
    a, b = make_data(64, 16, 32, 4, seed=1), make_data(64, 16, 32, 4, seed=1)
    assert torch.equal(a.x, b.x)
    assert torch.allclose(a.features.norm(dim=1), torch.ones(32))
    assert ((a.codes != 0).sum(dim=1) == 4).all()


def test_without_noise_the_samples_are_exactly_their_codes_times_features():
    data = make_data(32, 8, 16, 3, noise=0.0)
    assert torch.allclose(data.x, data.codes @ data.features)


def test_bad_sizes_are_refused():
    with pytest.raises(CourseError, match="active=9 .*from 1 to 8"):
        make_data(8, 4, 8, 9)
    with pytest.raises(CourseError, match="n_samples=0"):
        make_data(0, 4, 8, 2)


def test_sizes_are_bounded():
    with pytest.raises(CourseError, match="n_samples=10000000"):
        make_data(n_samples=10**7)
    with pytest.raises(CourseError, match="too many"):
        make_data(n_samples=500_000, n_true=512)
    with pytest.raises(CourseError, match="noise=-1"):
        make_data(noise=-1)
