"""How much does the emulated MPS device cost? Plain CPU training vs the same run on "emps".

Prints seconds per run and the ratios to plain CPU training, all measured in this one run
(same data, same steps, interleaved repeats, best of three), for both initialisations:
the contiguous one pays only the dispatch overhead, the transposed one also pays the
Placeholder's gathers, as on the real device.

    python benchmarks/bench_emulation.py [--steps 60]
"""

from __future__ import annotations

import argparse
import time

from course.model import runs


def best_time(device: str, init: str, steps: int, repeats: int) -> float:
    """The fastest of `repeats` training runs, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        runs.run(device=device, init=init, steps=steps, progress=None)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs.dataset()  # build the data outside the timings
    for device in ("cpu", "emps"):  # warm up allocators and thread pools before timing
        runs.run(device=device, steps=3, progress=None)
    print(f"{'init':<11} {'cpu s':>7} {'emps s':>7} {'emps/cpu':>9}")
    for init in ("contiguous", "transposed"):
        cpu = best_time("cpu", init, args.steps, args.repeats)
        emulated = best_time("emps", init, args.steps, args.repeats)
        print(f"{init:<11} {cpu:7.2f} {emulated:7.2f} {emulated / cpu:9.2f}")


if __name__ == "__main__":
    main()
