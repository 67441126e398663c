"""Synthetic activations with known ground-truth features, generated locally and seeded.

Each sample is a sparse, non-negative combination of a few unit "feature directions" plus a
little noise: exactly what a sparse autoencoder is meant to recover. Because the directions are
known, notebook 09 can show a properly trained SAE finding them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from course.errors import CourseError, require_int, require_range, require_seed
from course.model.sae import MAX_WIDTH

MAX_SAMPLES = 1_000_000
MAX_CODE_ELEMENTS = 50_000_000  # the dense codes matrix (n_samples x n_true): 200 MB at most


@dataclass(frozen=True)
class SyntheticData:
    """Samples `x` (n, d_model) built from `features` (n_true, d_model) with known sparse codes."""

    x: torch.Tensor
    features: torch.Tensor
    codes: torch.Tensor


def make_data(
    n_samples: int = 4096,
    d_model: int = 384,
    n_true: int = 512,
    active: int = 8,
    noise: float = 0.01,
    seed: int = 0,
) -> SyntheticData:
    """Generate `n_samples` activations from `n_true` random unit directions, `active` at a time."""
    require_int("n_samples", n_samples, 1, MAX_SAMPLES)
    require_int("d_model", d_model, 1, MAX_WIDTH)
    require_int("n_true", n_true, 1, MAX_WIDTH)
    require_int("active", active, 1, n_true)
    require_range("noise", noise, 0.0, 10.0)
    require_seed(seed)
    if n_samples * n_true > MAX_CODE_ELEMENTS:
        raise CourseError(
            f"n_samples={n_samples} x n_true={n_true} codes is too many; at most "
            f"{MAX_CODE_ELEMENTS:,} in all"
        )
    gen = torch.Generator().manual_seed(seed)
    features = torch.randn(n_true, d_model, generator=gen)
    features = features / features.norm(dim=1, keepdim=True)  # (n_true, d_model), unit rows
    which = torch.rand(n_samples, n_true, generator=gen).argsort(dim=1)[:, :active]
    magnitudes = torch.empty(n_samples, active).exponential_(1.0, generator=gen) + 0.5
    codes = torch.zeros(n_samples, n_true).scatter_(1, which, magnitudes)  # (n, n_true), sparse
    x = codes @ features + noise * torch.randn(n_samples, d_model, generator=gen)
    return SyntheticData(x=x, features=features, codes=codes)
