"""Does a script whose last statement is a backward pass on "emps" exit cleanly, every time?

    python benchmarks/exit_aborts.py [--runs 60] [--threaded]

Runs a five-line program in fresh processes (import the course, one backward pass on the
emulated device, exit) and counts the runs that abort ("terminate called without an active
exception", exit status 134): see Note [Backward on the calling thread] in
course/emps/threads.py. `--threaded` turns autograd's device thread back on in the child,
which shows the abort the note describes (about one run in ten here). A test would need dozens
of fresh processes of a few seconds each to see a one-in-ten event, far beyond the unit
suite's budget, so the check lives here; tests/emps/test_threads.py checks the mechanism.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

CHILD = """
import torch
from course import emps
{threaded}
w = torch.nn.Parameter(torch.randn(64, 32).to(emps.DEVICE))
x = torch.randn(16, 64, device=emps.DEVICE)
((x @ w).relu() @ w.t()).pow(2).sum().backward()
"""
THREADED = "torch.autograd.set_multithreading_enabled(True)"


def one_run(threaded: bool) -> tuple[int, str]:
    """Exit status and stderr of one fresh process."""
    program = CHILD.format(threaded=THREADED if threaded else "")
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300
    )
    return done.returncode, done.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--threaded", action="store_true")
    args = parser.parse_args(argv)
    failed = 0
    for index in range(1, args.runs + 1):
        status, stderr = one_run(args.threaded)
        if status != 0:
            failed += 1
            last = stderr.strip().splitlines()[-1:] or [""]
            print(f"run {index}: exit status {status}: {last[0][:100]}", flush=True)
    how = "device thread on" if args.threaded else "as shipped"
    print(f"{failed} of {args.runs} runs failed ({how})")
    return int(failed > 0)


if __name__ == "__main__":
    sys.exit(main())
