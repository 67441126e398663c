"""The kernel benchmark: ratios from one run, the copy bandwidth, the summary line."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.kernels.cpp import load
from course.kernels.cpp.bench import Timing, benchmark, largest, plot, shape_for, summary_line


@pytest.fixture(scope="module")
def compiled():
    load()


@pytest.mark.compile
def test_benchmark_measures_ratios_in_one_run(compiled):
    timings, bandwidth = benchmark([1 << 12], repeats=2, kernels=("naive", "iterator"))
    assert bandwidth > 0
    assert {(t.kernel, t.layout) for t in timings} == {
        (k, lay) for k in ("native", "naive", "iterator") for lay in ("contiguous", "transposed")
    }
    assert all(t.ratio_to_native == 1.0 for t in timings if t.kernel == "native")
    assert len(plot(timings, bandwidth).axes) == 4


def test_sizes_must_be_whole_rows():
    with pytest.raises(CourseError, match="multiples of 1024"):
        shape_for(1000)


def test_summary_line_reports_the_largest_size():
    timings = [
        Timing("tiled", "transposed", 1 << 20, 0.01, 0.5, 0.3),
        Timing("tiled", "transposed", 1 << 24, 0.1, 1 / 12.3, 0.612),
        Timing("iterator", "contiguous", 1 << 24, 0.1, 1.2, 1.0),
    ]
    assert summary_line(timings) == (
        "tiled kernel, transposed, largest size: 12.3x faster than native, BW frac 0.61"
    )
    assert largest(timings, "iterator", "contiguous").ratio_to_native == 1.2
    with pytest.raises(CourseError, match="no timing of the naive kernel"):
        largest(timings, "naive", "transposed")
