"""Outputs the emulated-device tests write into: a poisoned transposed matrix and its inputs."""

from __future__ import annotations

import torch

from course import emps

POISON = -7.0  # a lost write leaves every element at this value


def transposed(n: int = 8) -> torch.Tensor:
    """An (n, n) output stored column by column (the story's layout), full of POISON."""
    return torch.full((n, n), POISON, device=emps.DEVICE).t()


def ones(n: int = 8) -> torch.Tensor:
    return torch.ones(n, n, device=emps.DEVICE)
