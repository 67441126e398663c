"""`python -m course mystery [--seed N]`: print a case's brief and run its scenario.

Without --seed the learner gets a random case and is told its seed, so an instructor (or the
learner, in notebook 10) can open exactly the same case again.
"""

from __future__ import annotations

import argparse
import sys

from course.errors import CourseError
from course.mystery.case import open_case


def cli(argv: list[str]) -> int:
    """`python -m course mystery [--seed N]`: the brief, then one run of the scenario."""
    parser = argparse.ArgumentParser(
        prog="python -m course mystery",
        description="Open an unseen bug case: its brief, then one run of its training scenario.",
    )
    parser.add_argument("--seed", type=int, help="which case (a whole number); random if omitted")
    options = parser.parse_args(argv)
    try:
        case = open_case(options.seed)
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if options.seed is None:
        print(f"Your case has seed {case.seed} (open it again with --seed {case.seed}).\n")
    print(case.describe(), "\n")
    print(case.run_scenario().summary())
    print(
        f"\nNext: open notebook 10 (10_your_case.ipynb), set its seed to {case.seed}, and find "
        "the bug with the tools of the course."
    )
    return 0
