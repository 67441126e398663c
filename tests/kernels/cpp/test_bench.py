"""The kernel benchmark: shared rounds, medians with spread, a pinned thread count, an honest
bandwidth fraction, the summary line. No timing is asserted: only how the numbers are made."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
import torch

from course.errors import CourseError
from course.kernels.cpp import load
from course.kernels.cpp.bench import (
    BenchRun,
    CacheSizes,
    Spread,
    Timing,
    _fraction,
    benchmark,
    cache_sizes,
    clock_for,
    method_line,
    parse_size,
    plot,
    ratio,
    run_rounds,
    shape_for,
    summary_line,
)


@pytest.fixture(scope="module")
def compiled():
    load()


@pytest.mark.compile
def test_benchmark_times_everything_in_the_same_rounds(compiled):
    before = torch.get_num_threads()
    run = benchmark([1 << 12], kernels=("naive", "tiled"), rounds=3, threads=1)
    assert torch.get_num_threads() == before and run.threads == 1
    assert {(t.kernel, t.layout) for t in run.timings} == {
        (k, lay) for k in ("native", "naive", "tiled") for lay in ("contiguous", "transposed")
    }
    rounds = run.rounds[1 << 12]
    assert rounds >= 3 and all(len(t.samples) == rounds for t in run.timings)
    assert all(t.ratio_to_native == Spread(1, 1, 1) for t in run.timings if t.kernel == "native")
    assert run.reference[1 << 12].median > 0
    assert len(plot(run).axes) == 4


def test_rounds_rotate_the_order_after_one_warm_up():
    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in "abc"}
    samples = run_rounds(fns, rounds=3, budget=0)
    assert calls == list("abc") + list("abc") + list("bca") + list("cab")
    assert all(len(s) == 3 for s in samples.values())


def test_spread_is_the_median_and_the_middle_half():
    assert Spread.of([5, 1, 3, 2, 4]) == Spread(3, 2, 4)
    assert Spread.of([7.0]) == Spread(7.0, 7.0, 7.0)


def _timing(kernel, layout, samples, fraction=0.5, numel=1 << 24):
    return Timing(kernel, layout, numel, tuple(samples), Spread(1, 1, 1), fraction)


def test_ratios_are_taken_round_by_round():
    slow_machine_then_fast = _timing("tiled", "transposed", [2.0, 0.2, 0.4])
    native = _timing("native", "contiguous", [1.0, 0.1, 0.1])
    assert ratio(slow_machine_then_fast, native) == Spread(2.0, 2.0, 3.0)


def test_fraction_above_one_beyond_the_cache_or_of_an_unsteady_reference_is_flagged():
    big, llc = 1 << 24, 64 << 20  # a 192 MiB working set, a 64 MiB cache
    steady, unsteady = Spread(1.6e10, 1.5e10, 1.7e10), Spread(1.1e10, 0.2e10, 1.7e10)
    assert _fraction(Spread(0.6, 0.5, 0.7), steady, big, llc) == (pytest.approx(0.8), "")
    above_one = Spread(0.9, 0.8, 1.0)  # 0.9 x 4/3 accesses
    assert _fraction(above_one, steady, big, llc)[0] is None
    assert "reference disturbed" in _fraction(above_one, steady, big, llc)[1]
    assert _fraction(above_one, steady, 1 << 12, llc)[1] == "fits in the last-level cache"
    assert "unknown" in _fraction(above_one, steady, big, None)[1]
    fraction, note = _fraction(Spread(0.6, 0.5, 0.7), unsteady, big, llc)
    assert fraction is None and note == "reference unsteady in this run (2.0-17.0 GB/s)"


def test_summary_line_reports_the_median_ratio_and_its_range():
    tiled = Timing("tiled", "transposed", 1 << 24, (0.1,) * 5, Spread(0.08, 0.05, 0.1), 0.612)
    flagged = Timing("tiled", "transposed", 1 << 24, (0.1,) * 5, Spread(2.0, 1.5, 2.5), None)
    run = BenchRun([tiled], {1 << 24: Spread(1e10, 1e10, 1e10)}, 1, {1 << 24: 15}, None)
    line = summary_line(run)
    assert line == (
        "tiled kernel, transposed, 16M elements: 12.5x faster than native [10.0-20.0x], "
        "BW frac 0.61"
    )
    assert len(line) < 100  # fits a notebook cell's output
    assert method_line(run).startswith("medians of 15+ rounds (1 thread, CPU time)")
    run = BenchRun([flagged], run.reference, 2, run.rounds, None)
    assert summary_line(run).endswith("2.0x slower than native [1.5-2.5x], BW frac flagged")
    assert "2 threads, wall time" in method_line(run)
    with pytest.raises(CourseError, match="no timing of the naive kernel"):
        run.get("naive", "transposed")
    cached = Timing("tiled", "transposed", 3 << 10, (0.1,) * 5, Spread(0.5, 0.4, 0.6), 1.06)
    cached = replace(cached, note="fits in the last-level cache")
    assert summary_line(BenchRun([cached], {}, 1, {3 << 10: 99}, None)).endswith(
        "3K elements: 2.0x faster than native [1.7-2.5x], BW frac 1.06 in cache"
    )


def test_one_thread_is_timed_by_its_cpu_clock():
    assert clock_for(1) is time.thread_time and clock_for(2) is time.perf_counter
    busy_waiting = {"sleep": lambda: time.sleep(0.02)}
    slept = run_rounds(busy_waiting, rounds=3, budget=0, clock=clock_for(1))["sleep"]
    assert max(slept) < 0.01  # a wait for something else is not the op's cost


def test_versus_compares_two_contenders_of_the_largest_size():
    run = BenchRun(
        [
            _timing("tiled", "transposed", [3.0, 3.0, 1.0], numel=1 << 20),
            _timing("native", "contiguous", [1.0, 1.0, 1.0], numel=1 << 20),
            _timing("tiled", "transposed", [1.2, 1.5, 2.0]),
            _timing("native", "contiguous", [1.0, 1.0, 1.0]),
        ],
        {},
        1,
        {},
        None,
    )
    assert run.versus("tiled", "transposed", "native", "contiguous") == Spread(1.5, 1.35, 1.75)


def _sysfs(folder, caches):
    for index, (level, kind, size) in enumerate(caches):
        entry = folder / f"index{index}"
        entry.mkdir()
        for name, text in (("level", level), ("type", kind), ("size", size)):
            (entry / name).write_text(f"{text}\n")
    return folder


def test_cache_sizes_are_read_from_sysfs_by_level_and_type(tmp_path):
    folder = _sysfs(
        tmp_path,
        [("1", "Data", "48K"), ("1", "Instruction", "64K"), ("2", "Unified", "2048K")]
        + [("3", "Unified", "266240K")],
    )
    assert cache_sizes(folder) == CacheSizes(48 << 10, 2 << 20, 266240 << 10, "sysfs")


def test_without_sysfs_getconf_then_sysctl_then_nothing(tmp_path):
    missing = tmp_path / "missing"
    answers = {("sysctl", "hw.l2cachesize"): "4194304\n", ("sysctl", "hw.l1dcachesize"): "65536"}
    found = cache_sizes(missing, ask=lambda tool, name: answers.get((tool, name), ""))
    assert found == CacheSizes(64 << 10, 4 << 20, 4 << 20, "sysctl")
    linux = cache_sizes(missing, ask=lambda tool, name: "1M" if tool == "getconf" else "")
    assert linux.source == "getconf" and linux.l2 == 1 << 20
    nothing = cache_sizes(missing, ask=lambda tool, name: "")
    assert nothing == CacheSizes(None, None, None, "unknown")


@pytest.mark.parametrize(
    "text, size",
    [("512K", 512 << 10), ("32M", 32 << 20), ("65536", 65536), ("", None), ("0", None)],
)
def test_sizes_are_parsed_with_binary_prefixes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sizes": [5000]}, "multiples of 1024 elements, got 5000"),
        ({"sizes": [1 << 30]}, "benchmark size=1073741824 is not allowed"),
        ({"rounds": 1}, "rounds=1 is not allowed"),
        ({"threads": 0}, "threads=0 is not allowed"),
        ({"kernels": ["fast"]}, "kernel='fast' is not allowed"),
        ({"layouts": ["diagonal"]}, "layout='diagonal' is not allowed"),
    ],
)
def test_bad_settings_are_refused_before_any_timing(kwargs, message):
    settings = {"sizes": [1 << 12], **kwargs}
    with pytest.raises(CourseError, match=message):
        benchmark(**settings)


def test_sizes_must_be_whole_rows():
    with pytest.raises(CourseError, match="multiples of 1024"):
        shape_for(5000)
