"""How much does the emulated MPS device cost? Plain CPU training vs the same run on "emps".

    python benchmarks/bench_emulation.py [--steps 60] [--rounds 5]

Each round trains the story's model once on the CPU and once on "emps" (the order alternating
from round to round), for both initialisations: the contiguous one pays only the dispatch
overhead, the transposed one also pays the Placeholder's gathers and copies, as the story's
device did. Same data, same steps, one pinned intra-op thread, timed by the process's CPU
clock (every thread of the process), so waits for a core on a busy machine do not count.
Printed: median seconds per run and the median of the per-round ratios emps/cpu, with the
middle half of the rounds in brackets. Targets: at most 1.3x contiguous and 2.0x transposed.
"""

from __future__ import annotations

import argparse
import sys
import time

from course.devices import pinned_threads
from course.kernels.cpp.bench import Spread
from course.model.runs import dataset, run

TARGETS = {"contiguous": 1.3, "transposed": 2.0}
DEVICES = ("cpu", "emps")


def cpu_seconds(device: str, init: str, steps: int) -> float:
    """CPU seconds of one training run (all the process's threads)."""
    start = time.process_time()
    run(init=init, device=device, steps=steps, progress=None)
    return time.process_time() - start


def rounds_for(init: str, steps: int, rounds: int) -> dict[str, list[float]]:
    """Seconds per device and round; the device order alternates from round to round."""
    seconds: dict[str, list[float]] = {device: [] for device in DEVICES}
    for index in range(rounds):
        for device in DEVICES if index % 2 == 0 else DEVICES[::-1]:
            seconds[device].append(cpu_seconds(device, init, steps))
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    dataset()  # build the data outside the timings
    with pinned_threads(1):
        for device in DEVICES:  # warm up imports, allocators and the dispatcher
            run(device=device, steps=3, progress=None)
        print(f"{'init':<11} {'cpu s':>7} {'emps s':>7} {'emps/cpu':>22}")
        for init in TARGETS:
            seconds = rounds_for(init, args.steps, args.rounds)
            ratio = Spread.of(e / c for c, e in zip(seconds["cpu"], seconds["emps"], strict=True))
            cpu, emulated = (Spread.of(seconds[device]).median for device in DEVICES)
            verdict = "within" if ratio.median <= TARGETS[init] else "OUTSIDE"
            print(
                f"{init:<11} {cpu:7.2f} {emulated:7.2f} {ratio.median:9.2f} "
                f"[{ratio.low:.2f}-{ratio.high:.2f}] ({verdict} the {TARGETS[init]}x target)"
            )
    print(f"medians of {args.rounds} rounds, {args.steps} steps each, 1 thread, CPU time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
