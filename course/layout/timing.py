"""Does layout cost time? Contiguous vs non-contiguous, measured live on the learner's machine.

Two experiments, both reported as ratios (absolute times depend on the machine, ratios much
less): the same ops on a contiguous matrix and on a transposed one; and reading the same number
of floats with growing strides. Memory moves in cache lines (64 bytes = 16 float32 on most CPUs),
so reading with stride 1 uses every float of each line fetched, while stride 16 or more fetches a
whole line per float (and larger strides touch a new memory page ever more often): walking down a
column of a row-major matrix is the stride-n case. Both run on one thread, so that what is
measured is memory access rather than how the threads were scheduled.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from matplotlib.figure import Figure

from course.devices import pinned_threads
from course.errors import require_range
from course.figures import PALETTE, REFERENCE_LINE, describe, fitted_figure

OPS: dict[str, Callable[[torch.Tensor], object]] = {
    "x + 1": lambda x: x + 1,
    "x.mul_(1.0)": lambda x: x.mul_(1.0),
    "x.sum(dim=1) (along rows)": lambda x: x.sum(dim=1),
    "x.sum(dim=0) (down columns)": lambda x: x.sum(dim=0),
    "x.clone()": lambda x: x.clone(),
    "x.clone(contiguous_format)": lambda x: x.clone(memory_format=torch.contiguous_format),
}


@dataclass(frozen=True)
class Timing:
    """One op timed on a contiguous and on a transposed input (best of several runs, ms)."""

    op: str
    contiguous_ms: float
    transposed_ms: float

    @property
    def ratio(self) -> float:
        return self.transposed_ms / self.contiguous_ms


def best_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Best wall time of `fn` over `repeats` runs after a warm-up (the least disturbed run)."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples)


def compare_layouts(n: int = 1024, repeats: int = 7, seed: int = 0) -> list[Timing]:
    """Each op of OPS on an (n, n) contiguous matrix and on a transposed (n, n) matrix."""
    require_range("n", n, 16, 8192)
    gen = torch.Generator().manual_seed(seed)  # private: the learner's global RNG is theirs
    contiguous = torch.randn(n, n, generator=gen)
    transposed = torch.randn(n, n, generator=gen).T  # (n, n) as well, stored column-major
    with pinned_threads(1):
        return [
            Timing(
                name,
                1e3 * best_seconds(lambda f=fn: f(contiguous), repeats),
                1e3 * best_seconds(lambda f=fn: f(transposed), repeats),
            )
            for name, fn in OPS.items()
        ]


def stride_sweep(
    count: int = 1 << 18, strides: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64), repeats: int = 7
) -> list[tuple[int, float]]:
    """Nanoseconds per float to sum `count` floats read with each stride (same work, more lines)."""
    require_range("count", count, 1024, 1 << 22)
    storage = torch.ones(count * max(strides))
    with pinned_threads(1):
        return [
            (s, 1e9 * best_seconds(lambda s=s: storage[::s][:count].sum(), repeats) / count)
            for s in strides
        ]


def timing_figure(timings: list[Timing], sweep: list[tuple[int, float]]) -> Figure:
    """Left: transposed/contiguous time ratio per op. Right: cost per float against stride."""
    fig = fitted_figure(height_px=324)
    left, right = fig.subplots(1, 2)
    left.barh([t.op for t in timings], [t.ratio for t in timings], color=PALETTE["sky blue"])
    left.axvline(1.0, **REFERENCE_LINE)
    left.set_xlabel("time on transposed x / time on contiguous x")
    left.invert_yaxis()
    right.plot([s for s, _ in sweep], [ns for _, ns in sweep], marker="o", color=PALETTE["blue"])
    right.set_xscale("log", base=2)
    right.axvline(16, **REFERENCE_LINE, label="16 floats = one 64-byte cache line")
    right.set_xlabel("stride (floats between consecutive reads)")
    right.set_ylabel("ns per float summed")
    right.legend()
    return describe(
        fig,
        "Left, bars: how many times longer each op takes on a transposed tensor than on a "
        "contiguous one (1 = as fast). Right, a line: the cost per float summed as the stride "
        "between reads grows",
    )


def timing_text(timings: list[Timing]) -> str:
    """The ratios as lines of text (machine-dependent: for NBVAL_IGNORE_OUTPUT cells)."""
    return "\n".join(
        f"{t.op:28s} contiguous {t.contiguous_ms:7.3f} ms  transposed "
        f"{t.transposed_ms:7.3f} ms  ratio {t.ratio:5.2f}"
        for t in timings
    )
