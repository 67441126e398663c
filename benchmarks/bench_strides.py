"""Benchmark the stride explorer's redraw: how long one control change takes to show.

    python benchmarks/bench_strides.py            # every preset, 5 redraws each
    python benchmarks/bench_strides.py --repeats 2

A redraw is the panel's whole callback: parse the chain, run the calculator and torch, draw the
figure and encode it as PNG. It is split into "compute + draw" and "PNG" so a slow redraw says
where the time goes. The target: the median redraw well under 100 ms (it should feel instant).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from course.figures import figure_png
from course.layout.explorer import PRESETS, draw_explorer, explore

TARGET_MS = 100.0


def redraw_ms(values: dict[str, object]) -> tuple[float, float, float]:
    """(compute + draw ms, PNG ms, CPU ms of both) for one redraw with these control values.

    CPU time is reported beside wall time because on a shared, busy machine the wall time also
    counts the waits for a core; the CPU time is what the redraw itself costs.
    """
    cpu, start = time.process_time(), time.perf_counter()
    drawing = draw_explorer(**values)
    middle = time.perf_counter()
    figure_png(drawing.figure)
    end = time.perf_counter()
    return 1e3 * (middle - start), 1e3 * (end - middle), 1e3 * (time.process_time() - cpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    panel = explore()
    totals, cpus = [], []
    print(f"{'preset':44s} {'draw ms':>8s} {'png ms':>8s} {'total':>8s} {'cpu ms':>8s}")
    for name in PRESETS:
        panel.controls["preset"].value = name  # loads the preset (and warms caches)
        samples = [redraw_ms(panel.values()) for _ in range(args.repeats)]
        draw = statistics.median(s[0] for s in samples)
        png = statistics.median(s[1] for s in samples)
        cpu = statistics.median(s[2] for s in samples)
        totals.append(draw + png)
        cpus.append(cpu)
        print(f"{name:44s} {draw:8.1f} {png:8.1f} {draw + png:8.1f} {cpu:8.1f}")
    median = statistics.median(totals)
    verdict = "OK" if median < TARGET_MS else "SLOW"
    print(
        f"median redraw {median:.1f} ms wall ({statistics.median(cpus):.1f} ms CPU), "
        f"worst {max(totals):.1f} ms; target < {TARGET_MS:.0f} ms wall: {verdict}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
