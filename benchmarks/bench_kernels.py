"""Benchmark the course's three C++ addcmul_ kernels against torch's native addcmul_.

    python benchmarks/bench_kernels.py            # sizes up to 16M elements, ~1 minute
    python benchmarks/bench_kernels.py --quick    # small sizes, a few seconds

Prints, per size and output layout, each kernel's median time, its ratio to native addcmul_
measured in the same run, and its achieved bandwidth (3 reads + 1 write per element) as a
fraction of this machine's copy bandwidth, also measured in this run. The target: the
TensorIterator kernel within 1.5x of native on contiguous outputs.
"""

from __future__ import annotations

import argparse
import sys

import torch

from course.kernels.cpp import load
from course.kernels.cpp.bench import benchmark

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
        sizes, repeats=args.repeats, progress=lambda text: print(text, flush=True)
    )
    print(f"\ncopy bandwidth: {bandwidth / 1e9:.2f} GB/s\n")
    print(f"{'kernel':<9} {'layout':<11} {'elements':>11} {'ms':>9} {'x native':>9} {'BW frac':>8}")
    for t in timings:
        print(
            f"{t.kernel:<9} {t.layout:<11} {t.numel:>11,} {t.seconds * 1e3:>9.3f} "
            f"{t.ratio_to_native:>9.2f} {t.bandwidth_fraction:>8.2f}"
        )
    best = [
        t.ratio_to_native for t in timings if t.kernel == "iterator" and t.layout == "contiguous"
    ]
    largest = best[-1]
    verdict = "within" if largest <= TARGET else "OUTSIDE"
    print(
        f"\niterator kernel, contiguous, largest size: {largest:.2f}x native "
        f"({verdict} the {TARGET}x target)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
