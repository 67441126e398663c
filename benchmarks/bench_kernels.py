"""Benchmark the course's C++ addcmul_ kernels against torch's native addcmul_, side by side.

    python benchmarks/bench_kernels.py            # sizes up to 16M elements, a few minutes
    python benchmarks/bench_kernels.py --quick    # small sizes, a few seconds

Prints, per size and output layout, each kernel's best time, its ratio to native addcmul_
measured in the same run (the kernels take turns), and its achieved bandwidth (3 reads + 1 write
per element) as a fraction of this machine's copy bandwidth, also measured in this run. Targets:
the TensorIterator kernel within 1.5x of native on contiguous outputs; the tiled kernel at least
10x faster than native on a transposed 16M-element output and at least half of the copy
bandwidth there. The last line is the tiled kernel's summary.
"""

from __future__ import annotations

import argparse
import sys

import torch

from course.kernels.cpp import load
from course.kernels.cpp.bench import benchmark, largest, summary_line

FULL_SIZES = (1 << 16, 1 << 20, 1 << 22, 1 << 24)
QUICK_SIZES = (1 << 12, 1 << 16, 1 << 18)
TARGET = 1.5


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    load()
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads", flush=True)
    timings, bandwidth = benchmark(
        sizes,
        repeats=args.repeats,
        progress=lambda done, total, note: print(f"[{done}/{total}] {note}", flush=True),
    )
    print(f"\ncopy bandwidth: {bandwidth / 1e9:.2f} GB/s\n")
    print(f"{'kernel':<9} {'layout':<11} {'elements':>11} {'ms':>9} {'x native':>9} {'BW frac':>8}")
    for t in timings:
        print(
            f"{t.kernel:<9} {t.layout:<11} {t.numel:>11,} {t.seconds * 1e3:>9.3f} "
            f"{t.ratio_to_native:>9.2f} {t.bandwidth_fraction:>8.2f}"
        )
    iterator = largest(timings, "iterator", "contiguous").ratio_to_native
    verdict = "within" if iterator <= TARGET else "OUTSIDE"
    print(
        f"\niterator kernel, contiguous, largest size: {iterator:.2f}x native "
        f"({verdict} the {TARGET}x target)"
    )
    print(summary_line(timings, "tiled", "transposed"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
