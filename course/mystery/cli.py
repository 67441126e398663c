"""`python -m course mystery`: open a case in a terminal, or deal cases to a room.

    python -m course mystery                 # a random case: its brief, then its training run
    python -m course mystery --seed 1234     # that seed's case
    python -m course mystery --deal 12 --key key.txt

`--deal N` hands out N seeds of N different cases (one per learner) and writes the instructor's
key (seed -> culprit, condition, where it strikes) to the file `--key` names, or prints it
after a separator when there is none. Dealing trains each case once (a few seconds each).
"""

from __future__ import annotations

import argparse
import secrets
import sys
from pathlib import Path

from course.errors import CourseError, require_int
from course.mystery.case import measured, open_case

MAX_DEAL = 200  # a large room; each case trains once while dealing


def deal(count: int, start: int | None = None) -> list[int]:
    """`count` seeds whose cases all differ (by model family, habit, op, condition and effect)."""
    require_int("--deal", count, 1, MAX_DEAL)
    seed = secrets.randbelow(1_000_000) if start is None else start
    seeds, keys = [], set()
    while len(seeds) < count:
        key = measured(seed).spec.key()
        if key not in keys:
            seeds.append(seed)
            keys.add(key)
        seed += 1
    return seeds


def key_line(seed: int) -> str:
    """One line of the instructor's key: what the seed's case is, nothing a learner sees."""
    spec = measured(seed).spec
    bug = spec.bug
    where = spec.design.hit
    return (
        f"seed {seed}: {bug.op} on {bug.trigger.describe()} ({bug.effect}); "
        f"{spec.design.family}, habit {spec.site.habit}: {where}"
    )


def _deal(count: int, key: Path | None) -> int:
    seeds = deal(count)
    print("Hand one seed to each learner (notebook 10: open_case(seed=...)):")
    print("\n".join(f"  {seed}" for seed in seeds))
    lines = [key_line(seed) for seed in seeds]
    if key is None:
        print("\n--- instructor's key (do not show) ---")
        print("\n".join(lines))
    else:
        key.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"\nThe instructor's key is in {key}.")
    return 0


def cli(argv: list[str]) -> int:
    """`python -m course mystery [--seed N | --deal N [--key FILE]]`."""
    parser = argparse.ArgumentParser(
        prog="python -m course mystery",
        description="Open an unseen bug case (its brief, then its training run), or deal cases.",
    )
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--seed", type=int, help="which case (a whole number); random if omitted")
    chosen.add_argument("--deal", type=int, metavar="N", help="seeds of N different cases")
    parser.add_argument("--key", type=Path, help="with --deal: write the instructor's key here")
    options = parser.parse_args(argv)
    try:
        if options.deal is not None:
            return _deal(options.deal, options.key)
        if options.key is not None:
            raise CourseError("--key goes with --deal")
        case = open_case(options.seed)
    except (CourseError, OSError) as exc:
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
