"""How long does `python -m course plateau` (default settings) take, start to verdict?

    python benchmarks/bench_plateau.py [--runs 3]

Runs the command in fresh processes, one after the other, and prints each run's wall time, its
CPU time (user + system, all its threads) and the machine's load average when it started, then
the medians. The target is at most 10 s wall on a lightly loaded 2-core machine: compare wall to
CPU time to see how much of a slow run was waiting for a core. About half of the CPU time is
imports PyTorch makes on first use (torch itself, torch._dynamo when the first optimizer is
built, torch.distributed.tensor at the first op on a tensor subclass); the rest is the two
training runs on the emulated device.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

TARGET_S = 10.0
COMMAND = (sys.executable, "-m", "course", "plateau")


def one_run() -> tuple[float, float, float]:
    """(wall seconds, CPU seconds of the child, 1-minute load average at its start)."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(COMMAND, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(COMMAND)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    walls, cpus = [], []
    print(f"{'run':>3} {'wall s':>7} {'CPU s':>7} {'load':>5}")
    for index in range(args.runs):
        wall, cpu, load = one_run()
        walls.append(wall)
        cpus.append(cpu)
        print(f"{index + 1:>3} {wall:7.2f} {cpu:7.2f} {load:5.2f}", flush=True)
    median = statistics.median(walls)
    verdict = "within" if median <= TARGET_S else "OUTSIDE"
    print(
        f"median {median:.2f} s wall ({min(walls):.2f}-{max(walls):.2f}), "
        f"{statistics.median(cpus):.2f} s CPU; {verdict} the {TARGET_S:.0f} s target"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
