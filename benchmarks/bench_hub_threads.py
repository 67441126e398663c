"""Torch's threads per hub learner: 8 learners training at once, with the hub's setting vs default.

    python benchmarks/bench_hub_threads.py [--learners 8] [--steps 120]

A hub runs many learners' kernels on one machine. Left alone, torch gives each process as many
math threads as the machine has cores, so N learners training at once run N x cores threads on
the cores: they contend. hub/workshop_config.py sets `OMP_NUM_THREADS` (and MKL's) per learner
to fit their share instead. This starts `--learners` processes at once, each running notebook
01's training (`course.model.runs.run`, the story's run, each learner with a seed of their own),
first with the hub's environment, then with torch's default (those variables unset), and prints
each batch's wall time (start to the last learner's finish, imports included), the median
learner's training time (imports excluded), and the ratio default / hub. A ratio above 1 means
the hub's setting finished the room sooner. No asserts: one run, printed, on whatever machine;
the machine's load average at each batch's start is printed beside it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[1]
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
PASSWORDS = ("COURSE_ROOM_PASSWORD", "COURSE_ADMIN_PASSWORD")
LEARNER = """
import time
import torch
from course.model.runs import run
start = time.perf_counter()
run(steps={steps}, seed={seed}, progress=None)
print(torch.get_num_threads(), time.perf_counter() - start)
"""


def hub_threads() -> dict[str, str]:
    """The thread variables hub/workshop_config.py gives every learner's server (read from it)."""
    config = Config()
    # the recipe reads its passwords from the environment: stand-ins while it is read, only
    missing = [key for key in PASSWORDS if key not in os.environ]
    os.environ.update(dict.fromkeys(missing, "unused"))
    try:
        source = (ROOT / "hub/workshop_config.py").read_text()
        exec(compile(source, "workshop_config.py", "exec"), {"get_config": lambda: config})
    finally:
        for key in missing:
            del os.environ[key]
    return {key: config.Spawner.environment[key] for key in THREAD_VARIABLES}


def room(learners: int, steps: int, threads: dict[str, str]) -> dict[str, float]:
    """Start every learner's training at once; their wall time as a room, and each one's own."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    env.update(threads, PYTHONPATH=str(ROOT))
    load = os.getloadavg()[0]
    start = time.perf_counter()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", LEARNER.format(steps=steps, seed=1000 + learner)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for learner in range(learners)
    ]
    results = []
    for process in processes:
        out, err = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"a learner's training failed ({process.returncode}):\n{err[-2000:]}")
        torch_threads, seconds = out.split()
        results.append((int(torch_threads), float(seconds)))
    return {
        "wall": time.perf_counter() - start,
        "training": statistics.median(seconds for _, seconds in results),
        "threads": max(threads for threads, _ in results),
        "load": load,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=8)
    parser.add_argument("--steps", type=int, default=120, help="notebook 01's run is 120 steps")
    args = parser.parse_args(argv)
    settings = {"hub": hub_threads(), "torch default": {}}
    print(
        f"{args.learners} learners training at once, {args.steps} steps each, "
        f"{os.cpu_count()} cores"
    )
    print(
        f"{'setting':<14} {'threads':>7} {'room wall s':>11} {'median training s':>17} {'load':>5}"
    )
    measured = {}
    for name, threads in settings.items():
        measured[name] = result = room(args.learners, args.steps, threads)
        print(
            f"{name:<14} {result['threads']:>7} {result['wall']:>11.1f} "
            f"{result['training']:>17.1f} {result['load']:>5.1f}",
            flush=True,
        )
    ratio = measured["torch default"]["wall"] / measured["hub"]["wall"]
    training = measured["torch default"]["training"] / measured["hub"]["training"]
    print(f"default / hub: {ratio:.2f}x room wall time, {training:.2f}x median training time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
