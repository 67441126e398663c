"""Benchmark the course's C++ addcmul_ kernels against torch's native addcmul_, side by side.

    python benchmarks/bench_kernels.py            # sizes up to 16M elements, about a minute
    python benchmarks/bench_kernels.py --quick    # small sizes, a few seconds
    python benchmarks/bench_kernels.py --threads 2 --rounds 21   # wall time, 2 threads
    python benchmarks/bench_kernels.py --l2 256K --retune   # tune as if the L2 were 256 KiB
    python benchmarks/bench_kernels.py --tile 64x256        # a given tile, no tuning

Per size, every contender (an in-place add_ as the memory reference, native addcmul_ and each
kernel, on a contiguous and on a transposed output) runs once per round, in a rotated order, with
the thread count pinned: one thread by default, timed by its CPU clock, so that the waits for a
core on a shared machine do not count (course/kernels/cpp/bench.py says why). Printed: median
milliseconds, the median ratio to native from the same rounds with the middle half of the rounds
in brackets, and the achieved bandwidth (3 reads + 1 write per element) as a fraction of the
reference's. First the tiled kernel's tile shape is chosen for this machine
(course/kernels/cpp/tuning.py: the shape cached for this machine's key, else a short autotune
around the shape its L2 cache size suggests, cached); `--l2`/`--llc` pretend other cache sizes
(another key, other candidates) to check that the choice holds where it was not tuned.
Targets: the iterator kernel within 1.5x of native on contiguous outputs; the tiled kernel on a
transposed 16M-element output within 1.3x of the layout-ignoring (naive) kernel on the same
output, the memory limit, measured in the same rounds. The last line is the tiled kernel's
summary. No target is asserted: a benchmark reports, a reader judges.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import torch

from course.kernels.cpp import load
from course.kernels.cpp.bench import (
    BenchRun,
    Spread,
    benchmark,
    cache_sizes,
    method_line,
    parse_size,
    summary_line,
)
from course.kernels.cpp.tuning import Tile, Tuned, autotune, cpu_model, use

FULL_SIZES = (1 << 16, 1 << 20, 1 << 22, 1 << 24)
QUICK_SIZES = (1 << 12, 1 << 16, 1 << 18)
TARGETS = (  # (kernel, layout, versus kernel, versus layout, target)
    ("iterator", "contiguous", "native", "contiguous", 1.5),
    ("tiled", "transposed", "naive", "transposed", 1.3),
)


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
    for kernel, layout, other, other_layout, target in TARGETS:
        versus = run.versus(kernel, layout, other, other_layout)
        verdict = "within" if versus.median <= target else "OUTSIDE"
        what = f"{kernel} on {layout} / {other} on {other_layout}"
        print(f"{what}: {spread_text(versus)} ({verdict} the {target}x target)")


def print_tuning(tuned: Tuned) -> None:
    """Which tile, how it was chosen, and each candidate's time when tuned now."""
    print(f"tile {tuned.tile} ({tuned.how}) for {tuned.key}")
    for tile, seconds in sorted(tuned.seconds.items(), key=lambda item: item[1]):
        print(f"  {str(tile):>11}: {seconds * 1e3:7.2f} ms")


def choose_tile(args: argparse.Namespace) -> Tuned:
    """--tile as given, else autotune (cached per machine key) with any cache size forced."""
    if args.tile:
        return Tuned(Tile.parse(args.tile), "given", "--tile", {})
    caches = cache_sizes()
    given = {name: getattr(args, name) for name in ("l2", "llc") if getattr(args, name)}
    forced = {name: parse_size(text) for name, text in given.items()}
    if None in forced.values():
        raise SystemExit("--l2 and --llc take sizes such as 256K, 2M")
    if forced:
        caches = replace(caches, **forced, source="forced")
    return autotune(caches, retune=args.retune)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--rounds", type=int, default=15, help="rounds per size (at least)")
    parser.add_argument(
        "--threads", type=int, default=1, help="pinned thread count (1: timed by CPU clock)"
    )
    parser.add_argument("--tile", help="tile shape IxJ for the tiled kernel (default: tuned)")
    parser.add_argument("--l2", help="tune as if the L2 cache had this size (e.g. 256K)")
    parser.add_argument("--llc", help="tune as if the last-level cache had this size (e.g. 8M)")
    parser.add_argument("--retune", action="store_true", help="ignore the cached tile")
    args = parser.parse_args(argv)
    load()
    tuned = choose_tile(args)
    use(tuned.tile)
    print_tuning(tuned)
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    run = benchmark(
        sizes,
        rounds=args.rounds,
        threads=args.threads,
        progress=lambda done, total, note: print(f"[{done}/{total}] {note}", flush=True),
    )
    llc = "unknown" if run.llc_bytes is None else f"{run.llc_bytes >> 20} MiB"
    print(f"{cpu_model()}, torch {torch.__version__}, last-level cache {llc}; {method_line(run)}\n")
    print_table(run)
    print()
    print_targets(run)
    print(summary_line(run, "tiled", "transposed"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
