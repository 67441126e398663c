"""The live layout-timing experiment: it runs, reports ratios and plots; speed is never asserted."""

from __future__ import annotations

import pytest
import torch

from course.errors import CourseError
from course.layout.timing import compare_layouts, stride_sweep, timing_figure, timing_text


def test_timing_experiment_runs_and_plots_without_asserting_speed():
    timings = compare_layouts(n=32, repeats=1)
    assert [t.op for t in timings][0] == "x + 1" and all(t.transposed_ms >= 0 for t in timings)
    sweep = stride_sweep(count=1024, strides=(1, 16), repeats=1)
    assert [s for s, _ in sweep] == [1, 16]
    assert len(timing_figure(timings, sweep).axes) == 2
    assert "ratio" in timing_text(timings)
    with pytest.raises(CourseError, match="n=4"):
        compare_layouts(n=4)


def test_the_experiment_leaves_the_global_rng_alone():
    torch.manual_seed(11)
    expected = torch.rand(4)
    torch.manual_seed(11)
    seed_before = torch.initial_seed()
    first = compare_layouts(n=16, repeats=1, seed=3)
    assert torch.initial_seed() == seed_before
    assert torch.equal(torch.rand(4), expected)
    assert len(first) == len(compare_layouts(n=16, repeats=1, seed=3))
