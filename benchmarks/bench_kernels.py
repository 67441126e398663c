"""Benchmark the course's C++ addcmul_ kernels against torch's native addcmul_, side by side.

    python benchmarks/bench_kernels.py            # sizes up to 16M elements, about a minute
    python benchmarks/bench_kernels.py --quick    # small sizes, a few seconds
    python benchmarks/bench_kernels.py --threads 2 --rounds 21   # wall time, 2 threads

Per size, every contender (an in-place add_ as the memory reference, native addcmul_ and each
kernel, on a contiguous and on a transposed output) runs once per round, in a rotated order, with
the thread count pinned: one thread by default, timed by its CPU clock, so that the waits for a
core on a shared machine do not count (course/kernels/cpp/bench.py says why). Printed: median
milliseconds, the median ratio to native from the same rounds with the middle half of the rounds
in brackets, and the achieved bandwidth (3 reads + 1 write per element) as a fraction of the
reference's. Targets: the iterator kernel within 1.5x of native on contiguous outputs; the tiled
kernel on a transposed 16M-element output within 1.5x of native on a contiguous one. The last
line is the tiled kernel's summary. No target is asserted: a benchmark reports, a reader judges.
"""

from __future__ import annotations

import argparse
import sys

import torch

from course.kernels.cpp import load
from course.kernels.cpp.bench import BenchRun, Spread, benchmark, method_line, summary_line

FULL_SIZES = (1 << 16, 1 << 20, 1 << 22, 1 << 24)
QUICK_SIZES = (1 << 12, 1 << 16, 1 << 18)
TARGET = 1.5


def spread_text(spread: Spread, digits: int = 2) -> str:
    """'1.23 [1.10-1.40]': the median and the middle half of the rounds."""
    return f"{spread.median:.{digits}f} [{spread.low:.{digits}f}-{spread.high:.{digits}f}]"


def print_table(run: BenchRun) -> None:
    """One line per (size, layout, kernel), then the reference per size."""
    print(
        f"{'kernel':<9} {'layout':<11} {'elements':>11} {'median ms':>10} {'x native':>18} BW frac"
    )
    for t in run.timings:
        frac = "-" if t.bandwidth_fraction is None else f"{t.bandwidth_fraction:.2f}"
        print(
            f"{t.kernel:<9} {t.layout:<11} {t.numel:>11,} {t.seconds.median * 1e3:>10.3f} "
            f"{spread_text(t.ratio_to_native):>18} {frac} {t.note}"
        )
    print("\nreference (in-place add_, 2 reads + 1 write per element), GB/s:")
    for numel, bandwidth in run.reference.items():
        gbs = Spread(bandwidth.median / 1e9, bandwidth.low / 1e9, bandwidth.high / 1e9)
        print(f"  {numel:>11,} elements, {run.rounds[numel]:>3} rounds: {spread_text(gbs)}")


def print_targets(run: BenchRun) -> None:
    """The two targets, each a ratio from the same rounds."""
    for kernel, layout, what in (
        ("iterator", "contiguous", "iterator on contiguous / native on contiguous"),
        ("tiled", "transposed", "tiled on transposed / native on contiguous"),
    ):
        versus = run.versus(kernel, layout, "native", "contiguous")
        verdict = "within" if versus.median <= TARGET else "OUTSIDE"
        print(f"{what}: {spread_text(versus)} ({verdict} the {TARGET}x target)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--rounds", type=int, default=15, help="rounds per size (at least)")
    parser.add_argument(
        "--threads", type=int, default=1, help="pinned thread count (1: timed by CPU clock)"
    )
    args = parser.parse_args(argv)
    load()
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    run = benchmark(
        sizes,
        rounds=args.rounds,
        threads=args.threads,
        progress=lambda done, total, note: print(f"[{done}/{total}] {note}", flush=True),
    )
    llc = "unknown" if run.llc_bytes is None else f"{run.llc_bytes >> 20} MiB"
    print(f"torch {torch.__version__}, last-level cache {llc}; {method_line(run)}\n")
    print_table(run)
    print()
    print_targets(run)
    print(summary_line(run, "tiled", "transposed"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
