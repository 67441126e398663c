"""Time the compiled addcmul_ kernels against torch's own, and against this machine's memory.

addcmul_ does almost no arithmetic per element, so its speed limit is memory traffic: each
element costs three reads (self, tensor1, tensor2) and one write. A number a learner will repeat
has to hold still on a busy machine, so the method is:

- Rounds. Each round runs the memory reference, native `addcmul_` and every kernel once, on both
  output layouts, in an order rotated from round to round. A burst of background load then hits
  all of them alike, and one disturbed round moves no median.
- Ratios within a round. A kernel's ratio to native is its time divided by native's time in the
  same round; the median over rounds is reported, with the middle half of the rounds as spread.
- A pinned thread count for the whole run (restored afterwards): every contender gets the same.
  By default one thread, timed by its own CPU clock: on a shared machine, wall time also counts
  the moments the thread waited for a core, which say nothing about the kernel, and a parallel
  op waits for its slowest thread. (With more threads the clock is wall time.)
- A reference whose traffic is fully counted: an in-place `x.add_(y)` of the same size (two
  reads, one write per element). A plain copy undercounts: its store first fetches the
  destination's cache line (write-allocate), a third transfer nobody counts, so kernels came out
  above 100% of "copy bandwidth".
- A fraction above 1 when the working set is larger than the last-level cache means the
  reference was disturbed in that run, and so does a reference whose middle half of rounds
  spans more than a factor UNSTEADY: such fractions are flagged instead of printed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from matplotlib.figure import Figure

from course.devices import pinned_threads
from course.errors import CourseError, require_choice, require_int
from course.figures import REFERENCE_LINE, describe, fitted_figure, series_style
from course.kernels.cpp.build import op
from course.kernels.cpp.harness import KERNEL_NAMES
from course.progressbar import Progress

BYTES = 4  # float32
ACCESSES = 4  # addcmul_: read self, tensor1, tensor2; write self
REFERENCE_ACCESSES = 3  # add_: read x, read y, write x (the line it has just read)
REFERENCE = "reference"
BENCH_LAYOUTS = ("contiguous", "transposed")
VALUE = 1e-3  # small, so repeated in-place updates stay finite
MIN_ROUNDS, MAX_ROUNDS = 3, 200
MAX_NUMEL = 1 << 25  # 128 MB per tensor; a round holds 8 such tensors
CPU_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")
UNSTEADY = 1.5  # a reference whose middle half of rounds spans more than this factor


@dataclass(frozen=True)
class Spread:
    """A median over rounds and the middle half of the rounds around it."""

    median: float
    low: float  # 25th percentile
    high: float  # 75th percentile

    @classmethod
    def of(cls, values: Iterable[float]) -> Spread:
        values = sorted(values)
        if len(values) < 2:
            return cls(values[0], values[0], values[0])
        low, median, high = statistics.quantiles(values, n=4, method="inclusive")
        return cls(median, low, high)


@dataclass(frozen=True)
class Timing:
    """One contender on one size and layout: its seconds in every round of the run."""

    kernel: str
    layout: str
    numel: int
    samples: tuple[float, ...] = field(repr=False)
    ratio_to_native: Spread  # this kernel's time / native's, same round, same layout
    bandwidth_fraction: float | None  # of the reference's bytes/s; None: flagged, see note
    note: str = ""

    @property
    def seconds(self) -> Spread:
        return Spread.of(self.samples)


@dataclass(frozen=True)
class BenchRun:
    """Everything one call of `benchmark` measured, with how it was measured."""

    timings: list[Timing]
    reference: dict[int, Spread]  # numel -> the reference's bytes per second
    threads: int
    rounds: dict[int, int]  # numel -> rounds run
    llc_bytes: int | None

    @property
    def clock(self) -> str:
        """What the seconds are: the one thread's CPU time, or wall time for several threads."""
        return "1 thread, CPU time" if self.threads == 1 else f"{self.threads} threads, wall time"

    def get(self, kernel: str, layout: str, numel: int | None = None) -> Timing:
        """One timing; `numel=None` means the largest size measured."""
        mine = [t for t in self.timings if t.kernel == kernel and t.layout == layout]
        if numel is not None:
            mine = [t for t in mine if t.numel == numel]
        if not mine:
            size = "any size" if numel is None else f"{numel:,} elements"
            raise CourseError(f"no timing of the {kernel} kernel on a {layout} output at {size}")
        return max(mine, key=lambda t: t.numel)

    def versus(self, kernel: str, layout: str, other: str, other_layout: str) -> Spread:
        """Round-by-round time ratio of two contenders at the largest size."""
        mine = self.get(kernel, layout)
        return ratio(mine, self.get(other, other_layout, mine.numel))


def ratio(a: Timing, b: Timing) -> Spread:
    """a's time / b's time, round by round (both measured in the same rounds)."""
    return Spread.of(x / y for x, y in zip(a.samples, b.samples, strict=True))


@dataclass(frozen=True)
class CacheSizes:
    """This CPU's data caches in bytes (None where unknown), and where they were read: the
    benchmark needs the last level to tell a bandwidth from a cache hit, the tiled kernel the
    L2 to size its tiles (course/kernels/cpp/tuning.py)."""

    l1d: int | None
    l2: int | None
    llc: int | None  # the largest (on most CPUs the L3, shared by every core)
    source: str  # "sysfs", "getconf", "sysctl", or "unknown"


def parse_size(text: str) -> int | None:
    """'512K' -> 524288, '32M', '1G', '65536' (bytes); None for anything else."""
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    digits = text.rstrip("KMG")
    return int(digits) * scale if digits.isdigit() and int(digits) > 0 else None


def sysfs_cache_sizes(folder: Path = CPU_CACHES) -> CacheSizes | None:
    """What Linux reports for cpu0 (index*/level, type, size); None where the folder is absent."""
    found = []  # (level, type, bytes) of each data or unified cache
    for entry in Path(folder).glob("index*"):
        fields = {
            name: (entry / name).read_text().strip() if (entry / name).exists() else ""
            for name in ("level", "type", "size")
        }
        size = parse_size(fields["size"])
        if size is not None and fields["type"] != "Instruction":
            found.append((fields["level"], size))
    if not found:
        return None
    level = {number: size for number, size in sorted(found)}
    return CacheSizes(level.get("1"), level.get("2"), max(size for _, size in found), "sysfs")


# Where sysfs is missing: glibc's getconf (Linux) or sysctl (macOS), one name per level.
QUERIES = {
    "getconf": ("LEVEL1_DCACHE_SIZE", "LEVEL2_CACHE_SIZE", "LEVEL3_CACHE_SIZE"),
    "sysctl": ("hw.l1dcachesize", "hw.l2cachesize", "hw.l3cachesize"),
}


def _ask(tool: str, name: str) -> str:
    command = [tool, name] if tool == "getconf" else [tool, "-n", name]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout if done.returncode == 0 else ""


def queried_cache_sizes(ask: Callable[[str, str], str] = _ask) -> CacheSizes | None:
    """The caches as getconf or sysctl report them (the first tool that knows the L2)."""
    for tool, names in QUERIES.items():
        l1d, l2, l3 = (parse_size(ask(tool, name)) for name in names)
        if l2 is not None:
            return CacheSizes(l1d, l2, max(size for size in (l1d, l2, l3) if size), tool)
    return None


def cache_sizes(folder: Path = CPU_CACHES, ask: Callable[[str, str], str] = _ask) -> CacheSizes:
    """sysfs, else getconf/sysctl, else every size unknown."""
    found = sysfs_cache_sizes(folder) or queried_cache_sizes(ask)
    return found or CacheSizes(None, None, None, "unknown")


def clock_for(threads: int) -> Callable[[], float]:
    """The thread's CPU clock for one thread, wall time for several (see the module doc)."""
    return time.thread_time if threads == 1 else time.perf_counter


def run_rounds(
    fns: dict[str, Callable[[], object]],
    rounds: int,
    budget: float,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Seconds of every fn in every round, the order rotated each round, after one warm-up.

    Rounds go on past `rounds` while they fit in `budget` seconds (small sizes are cheap and
    noisy, so they get many more rounds), up to MAX_ROUNDS.
    """
    for fn in fns.values():
        fn()
    names = list(fns)
    samples: dict[str, list[float]] = {name: [] for name in names}
    start_all, done = time.perf_counter(), 0
    while done < rounds or (time.perf_counter() - start_all < budget and done < MAX_ROUNDS):
        shift = done % len(names)
        for name in names[shift:] + names[:shift]:
            start = clock()
            fns[name]()
            samples[name].append(clock() - start)
        done += 1
    return samples


def shape_for(numel: int) -> tuple[int, int]:
    """A 2-d shape with `numel` elements, 1024 columns wide (numel must be a multiple of 1024)."""
    require_int("benchmark size", numel, 1024, MAX_NUMEL)
    if numel % 1024:
        raise CourseError(f"benchmark sizes must be multiples of 1024 elements, got {numel}")
    return numel // 1024, 1024


def _output(numel: int, layout: str) -> torch.Tensor:
    rows, cols = shape_for(numel)
    return torch.zeros(rows, cols) if layout == "contiguous" else torch.zeros(cols, rows).t()


def _runner(kernel: str) -> Callable[..., torch.Tensor]:
    if kernel == "native":
        return torch.Tensor.addcmul_
    return op(kernel)


def _contenders(
    numel: int, layouts: tuple[str, ...], kernels: tuple[str, ...]
) -> dict[tuple[str, str], Callable[[], object]]:
    """(kernel, layout) -> a call, plus the reference: every tensor made once, up front."""
    gen = torch.Generator().manual_seed(0)
    t1, t2 = (
        torch.randn(shape_for(numel), generator=gen),
        torch.randn(shape_for(numel), generator=gen),
    )
    x, y = torch.zeros(numel), torch.randn(numel, generator=gen)
    fns: dict[tuple[str, str], Callable[[], object]] = {
        (REFERENCE, ""): lambda: x.add_(y, alpha=VALUE)
    }
    for layout in layouts:
        out = _output(numel, layout)
        for kernel in ("native", *kernels):
            fn = _runner(kernel)
            fns[kernel, layout] = lambda fn=fn, out=out: fn(out, t1, t2, value=VALUE)
    return fns


def _fraction(
    versus_reference: Spread, reference: Spread, numel: int, llc: int | None
) -> tuple[float | None, str]:
    """The bandwidth fraction, or None and why: an unsteady reference is no yardstick, and
    above 1 beyond the last-level cache is not physics."""
    if reference.high > UNSTEADY * reference.low:
        low, high = reference.low / 1e9, reference.high / 1e9
        return None, f"reference unsteady in this run ({low:.1f}-{high:.1f} GB/s)"
    fraction = versus_reference.median * ACCESSES / REFERENCE_ACCESSES
    if fraction <= 1.0:
        return fraction, ""
    if llc is None:
        return fraction, "above 1: cache size unknown"
    if 3 * numel * BYTES > llc:  # the working set: self, tensor1, tensor2
        return None, "reference disturbed: BW frac > 1 beyond the last-level cache"
    return fraction, "fits in the last-level cache"


def time_size(
    numel: int,
    layouts: tuple[str, ...],
    kernels: tuple[str, ...],
    rounds: int,
    llc: int | None,
    clock: Callable[[], float] = time.perf_counter,
    budget: float = 0.5,
) -> tuple[list[Timing], Spread, int]:
    """All contenders on one size in the same rounds: timings, reference bytes/s, rounds run."""
    samples = run_rounds(_contenders(numel, layouts, kernels), rounds, budget, clock)
    reference = samples.pop((REFERENCE, ""))
    bytes_per_s = Spread.of(REFERENCE_ACCESSES * numel * BYTES / s for s in reference)
    timings = []
    for (kernel, layout), mine in samples.items():
        native = samples["native", layout]
        versus_reference = Spread.of(r / m for r, m in zip(reference, mine, strict=True))
        fraction, note = _fraction(versus_reference, bytes_per_s, numel, llc)
        to_native = Spread.of(m / n for m, n in zip(mine, native, strict=True))
        timings.append(Timing(kernel, layout, numel, tuple(mine), to_native, fraction, note))
    return timings, bytes_per_s, len(reference)


def benchmark(
    sizes: Iterable[int],
    layouts: Iterable[str] = BENCH_LAYOUTS,
    kernels: Iterable[str] = KERNEL_NAMES,
    rounds: int = 15,
    threads: int = 1,
    progress: Progress | None = None,
) -> BenchRun:
    """Every (size, layout, kernel) and the memory reference, size by size, in shared rounds."""
    sizes, layouts, kernels = tuple(sizes), tuple(layouts), tuple(kernels)
    for numel in sizes:
        shape_for(numel)
    for layout in layouts:
        require_choice("layout", layout, BENCH_LAYOUTS)
    for kernel in kernels:
        require_choice("kernel", kernel, KERNEL_NAMES)
    require_int("rounds", rounds, MIN_ROUNDS, MAX_ROUNDS)
    require_int("threads", threads, 1, os.cpu_count() or 1)
    llc = cache_sizes().llc
    timings, reference, done = [], {}, {}
    with pinned_threads(threads):
        for index, numel in enumerate(sizes):
            if progress:
                note = f"timing {numel:>10,} elements ({3 * numel * BYTES >> 20} MiB)"
                progress(index + 1, len(sizes), note)
            mine, reference[numel], done[numel] = time_size(
                numel, layouts, kernels, rounds, llc, clock_for(threads)
            )
            timings += mine
    return BenchRun(timings, reference, threads, done, llc)


def _times(spread: Spread) -> str:
    """A ratio to native as "x faster" or "x slower", the middle half of the rounds in brackets."""
    if spread.median <= 1:
        fast, slow = 1 / spread.high, 1 / spread.low
        return f"{1 / spread.median:.1f}x faster than native [{fast:.1f}-{slow:.1f}x]"
    return f"{spread.median:.1f}x slower than native [{spread.low:.1f}-{spread.high:.1f}x]"


def summary_line(run: BenchRun, kernel: str = "tiled", layout: str = "transposed") -> str:
    """One line: how much faster than native `kernel` is at the largest size, the middle half
    of the rounds in brackets, and its share of the memory reference's bandwidth ("in cache"
    when above 1 because the data fit in the last-level cache)."""
    t = run.get(kernel, layout)
    frac = "flagged" if t.bandwidth_fraction is None else f"{t.bandwidth_fraction:.2f}"
    if t.note.startswith("fits"):
        frac += " in cache"
    versus = _times(t.ratio_to_native)
    return f"{kernel} kernel, {layout}, {_size(t.numel)} elements: {versus}, BW frac {frac}"


def _size(numel: int) -> str:
    """16M, 64K (binary prefixes: the benchmark's sizes are powers of two)."""
    for shift, prefix in ((20, "M"), (10, "K")):
        if numel % (1 << shift) == 0:
            return f"{numel >> shift}{prefix}"
    return f"{numel:,}"


def method_line(run: BenchRun) -> str:
    """How the numbers were made, for the line above a table or a summary."""
    rounds = min(run.rounds.values())
    return f"medians of {rounds}+ rounds ({run.clock}); [low-high]: the middle half of the rounds"


def plot(run: BenchRun) -> Figure:
    """Time ratio to native (left, middle half of the rounds as error bars) and fraction of
    the reference bandwidth (right, flagged points left out), one row per layout."""
    layouts = sorted({t.layout for t in run.timings}, key=BENCH_LAYOUTS.index)
    fig = fitted_figure(height_px=288 * len(layouts))
    axes = fig.subplots(len(layouts), 2, squeeze=False)
    for row, layout in zip(axes, layouts, strict=True):
        for number, kernel in enumerate(dict.fromkeys(t.kernel for t in run.timings)):
            style = series_style(number, marked=True)  # a few sizes: mark each point
            mine = [t for t in run.timings if t.kernel == kernel and t.layout == layout]
            ratios = [t.ratio_to_native for t in mine]
            row[0].errorbar(
                [t.numel for t in mine],
                [r.median for r in ratios],
                yerr=[[r.median - r.low for r in ratios], [r.high - r.median for r in ratios]],
                capsize=3,
                label=kernel,
                **style,
            )
            shown = [t for t in mine if t.bandwidth_fraction is not None]
            row[1].plot(
                [t.numel for t in shown],
                [t.bandwidth_fraction for t in shown],
                label=kernel,
                **style,
            )
        row[0].axhline(1.5, **REFERENCE_LINE, label="1.5x native")
        row[0].set(
            xscale="log",
            yscale="log",
            xlabel="elements",
            ylabel="time / native",
        )
        row[0].set_title(f"{layout} output:\ntime ratio to torch's addcmul_", fontsize=10)
        row[1].set(
            xscale="log",
            ylim=(0, None),
            xlabel="elements",
            ylabel="fraction of reference BW",
        )
        row[1].set_title(f"{layout} output:\nshare of an in-place add_'s bandwidth", fontsize=10)
        row[0].legend()
    fig.suptitle(f"{run.threads} thread(s), medians over rounds", fontsize=10)
    return describe(
        fig,
        "Per output layout, two line plots against the number of elements, one line per kernel: "
        "its time as a multiple of torch's own addcmul_ (error bars: the middle half of the "
        "rounds), and its share of an in-place add_'s memory bandwidth",
    )
