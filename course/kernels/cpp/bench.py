"""Time the compiled addcmul_ kernels against torch's own, and against this machine's memory.

addcmul_ does almost no arithmetic per element, so its speed limit is memory bandwidth: each
element costs three reads (self, tensor1, tensor2) and one write. `copy_bandwidth` measures what
a plain copy reaches on this machine, in the same run, and every kernel is reported as a
fraction of it, and as a time ratio to native `addcmul_` measured moments before. Absolute times
differ between machines; these ratios are what the lesson compares.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

import torch
from matplotlib.figure import Figure

from course.errors import CourseError
from course.kernels.cpp.build import op
from course.kernels.cpp.harness import KERNEL_NAMES
from course.progressbar import Progress

BYTES_PER_ELEMENT_ACCESS = 4  # float32
ACCESSES = 4  # addcmul_: read self, tensor1, tensor2; write self
BENCH_LAYOUTS = ("contiguous", "transposed")
VALUE = 1e-3  # small, so repeated in-place updates stay finite
MAX_ROUNDS = 200


@dataclass
class Timing:
    """One kernel on one size and layout: best seconds, ratio to native, bandwidth fraction."""

    kernel: str
    layout: str
    numel: int
    seconds: float
    ratio_to_native: float
    bandwidth_fraction: float

    def as_row(self) -> dict[str, object]:
        """A flat dict for tables, rounded for reading."""
        row = asdict(self)
        row.update(
            seconds=f"{self.seconds * 1e3:.3f} ms",
            ratio_to_native=round(self.ratio_to_native, 2),
            bandwidth_fraction=round(self.bandwidth_fraction, 2),
        )
        return row


def best_seconds(
    fns: dict[str, Callable[[], object]], repeats: int, budget: float = 0.5
) -> dict[str, float]:
    """Fastest wall time of each fn, taking turns, after one warm-up each.

    Taking turns (native, naive, ..., native, naive, ...) exposes every kernel to the same
    background load, and the minimum is the least disturbed run: ratios stay stable on a busy
    machine, where single timings of a multi-threaded kernel can jump by 100x. Rounds go on
    past `repeats` while they fit in `budget` seconds (cheap small sizes get many rounds).
    """
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    start_all, rounds = time.perf_counter(), 0
    while rounds < repeats or (time.perf_counter() - start_all < budget and rounds < MAX_ROUNDS):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
        rounds += 1
    return best


def copy_bandwidth(numel: int = 1 << 24, repeats: int = 5) -> float:
    """Bytes per second a float32 copy reaches here (one read + one write per element)."""
    src, dst = torch.randn(numel), torch.empty(numel)
    seconds = best_seconds({"copy": lambda: dst.copy_(src)}, repeats)["copy"]
    return 2 * numel * BYTES_PER_ELEMENT_ACCESS / seconds


def shape_for(numel: int) -> tuple[int, int]:
    """A 2-d shape with `numel` elements, 1024 columns wide (numel must be a multiple of 1024)."""
    if numel < 1024 or numel % 1024:
        raise CourseError(f"benchmark sizes must be multiples of 1024 elements, got {numel}")
    return numel // 1024, 1024


def _output(numel: int, layout: str) -> torch.Tensor:
    rows, cols = shape_for(numel)
    return torch.zeros(rows, cols) if layout == "contiguous" else torch.zeros(cols, rows).t()


def _runner(kernel: str) -> Callable[..., torch.Tensor]:
    if kernel == "native":
        return torch.Tensor.addcmul_
    return op(kernel)


def time_size(
    numel: int, layout: str, kernels: Iterable[str], bandwidth: float, repeats: int
) -> list[Timing]:
    """Time native and each kernel on one size and output layout (ratios from this same call)."""
    out = _output(numel, layout)
    gen = torch.Generator().manual_seed(0)
    t1, t2 = torch.randn(out.shape, generator=gen), torch.randn(out.shape, generator=gen)
    moved = ACCESSES * numel * BYTES_PER_ELEMENT_ACCESS
    runners = {k: _runner(k) for k in ("native", *kernels)}
    fns = {k: (lambda fn=fn: fn(out, t1, t2, value=VALUE)) for k, fn in runners.items()}
    best = best_seconds(fns, repeats)
    return [
        Timing(k, layout, numel, s, s / best["native"], moved / s / bandwidth)
        for k, s in best.items()
    ]


def benchmark(
    sizes: Iterable[int],
    layouts: Iterable[str] = BENCH_LAYOUTS,
    kernels: Iterable[str] = KERNEL_NAMES,
    repeats: int = 5,
    progress: Progress | None = None,
) -> tuple[list[Timing], float]:
    """Every (size, layout, kernel), with the copy bandwidth measured in the same run."""
    kernels = tuple(kernels)
    bandwidth = copy_bandwidth(repeats=repeats)  # always 16M elements: memory, not cache
    timings = []
    steps = [(numel, layout) for numel in sizes for layout in layouts]
    for index, (numel, layout) in enumerate(steps):
        if progress:
            progress(index + 1, len(steps), f"timing {numel:>10,} elements, {layout} output")
        timings += time_size(numel, layout, kernels, bandwidth, repeats)
    return timings, bandwidth


def largest(timings: list[Timing], kernel: str, layout: str) -> Timing:
    """The timing of `kernel` on `layout` at the largest size measured."""
    mine = [t for t in timings if t.kernel == kernel and t.layout == layout]
    if not mine:
        raise CourseError(f"no timing of the {kernel} kernel on a {layout} output in this run")
    return max(mine, key=lambda t: t.numel)


def summary_line(timings: list[Timing], kernel: str = "tiled", layout: str = "transposed") -> str:
    """One line: how much faster than native `kernel` is at the largest size, and its share
    of copy bandwidth (`tiled kernel, transposed, largest size: 12.3x faster than native, ...`)."""
    t = largest(timings, kernel, layout)
    return (
        f"{kernel} kernel, {layout}, largest size: {1 / t.ratio_to_native:.1f}x faster than "
        f"native, BW frac {t.bandwidth_fraction:.2f}"
    )


def plot(timings: list[Timing], bandwidth: float) -> Figure:
    """Time ratio to native (left) and fraction of copy bandwidth (right), per layout."""
    layouts = sorted({t.layout for t in timings}, key=BENCH_LAYOUTS.index)
    fig = Figure(figsize=(9, 3.2 * len(layouts)))
    axes = fig.subplots(len(layouts), 2, squeeze=False)
    for row, layout in zip(axes, layouts, strict=True):
        for kernel in dict.fromkeys(t.kernel for t in timings):
            mine = [t for t in timings if t.kernel == kernel and t.layout == layout]
            sizes = [t.numel for t in mine]
            row[0].plot(sizes, [t.ratio_to_native for t in mine], marker="o", label=kernel)
            row[1].plot(sizes, [t.bandwidth_fraction for t in mine], marker="o", label=kernel)
        row[0].axhline(1.5, color="grey", linestyle=":", label="1.5x native")
        row[0].set(
            xscale="log",
            yscale="log",
            xlabel="elements",
            ylabel="time / native",
            title=f"{layout} output: time ratio to torch's addcmul_",
        )
        row[1].set(
            xscale="log",
            ylim=(0, None),
            xlabel="elements",
            ylabel="fraction of copy BW",
            title=f"{layout}: bandwidth (copy = {bandwidth / 1e9:.1f} GB/s)",
        )
        row[0].legend(fontsize=8)
    fig.tight_layout()
    return fig
