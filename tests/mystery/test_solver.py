"""The scripted investigation (course.mystery.solver): it solves every case it meets, by the
course's method, among at least four in-place ops the bug could hide in, and no band of cases
falls to fewer experiments than its floor."""

from __future__ import annotations

import functools
import random

import pytest

from course.mystery.generate import BANDS, generate
from course.mystery.solver import investigate

# The fewest experiments the method needs per band, measured on 80 random cases (min 5, 20 and
# 51; medians 18, 34 and 69: benchmarks/bench_solver.py): two runs and a recorded step, the
# hypotheses the culprit op's calls suggest before the right one, one control.
FLOORS = {"knob": 5, "experiment": 20, "pair": 50}
PER_BAND = 3  # cases per band: about 30 seconds of experiments on two quiet cores


@functools.cache
def sample() -> dict[str, tuple[int, ...]]:
    """The first PER_BAND seeds of each band from a fixed stream of random seeds."""
    draws, found = random.Random(36), {band: [] for band in BANDS}
    while any(len(seeds) < PER_BAND for seeds in found.values()):
        seed = draws.randrange(10**9)
        seeds = found[generate(seed).band]
        if len(seeds) < PER_BAND:
            seeds.append(seed)
    return {band: tuple(seeds) for band, seeds in found.items()}


@pytest.mark.parametrize("band", sorted(FLOORS))
def test_the_method_solves_each_case_and_needs_at_least_the_bands_floor(band):
    for seed in sample()[band]:
        spec = generate(seed)
        done = investigate(spec)
        assert done.solved(spec), (seed, spec.bug, done.op, done.condition)
        assert len(done.suspects) >= 4, done.suspects  # forward and optimizer: a real choice
        assert done.count >= FLOORS[band], (seed, done.experiments)


def test_every_band_has_a_floor_and_a_harder_band_a_higher_one():
    assert set(FLOORS) == set(BANDS)
    assert FLOORS["knob"] < FLOORS["experiment"] < FLOORS["pair"]
