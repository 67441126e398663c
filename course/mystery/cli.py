"""`python -m course mystery`: open a case in a terminal, or deal cases to a room.

    python -m course mystery                 # a random case: its brief, then its training run
    python -m course mystery --seed 1234     # that seed's case
    python -m course mystery --deal 12 --key key.txt

`--deal N` hands out N seeds (one per learner) and writes the instructor's key (per seed: the
culprit, its condition, where it strikes, the reference repro and fix) to the file `--key`
names, or prints it after a separator when there is none.

Note [Dealing trains nothing]
    A deal needs each case's spec, not its measured brief: `generate(seed)` draws it in
    milliseconds, so a room of 25 is dealt in about a second however busy the machine
    (benchmarks/bench_deal.py measures it; tests/mystery/test_cli.py checks that dealing never
    trains). Each seed is drawn at random from a billion, so a neighbour's seed says nothing
    about one's own, and no two learners share an (op, condition) pair, the answer of
    check_culprit, until every pair the generator can draw is used (`pairs()`).
"""

from __future__ import annotations

import argparse
import functools
import secrets
import sys
import textwrap
from pathlib import Path

from course.errors import CourseError, require_int
from course.mystery.case import REDRAWS, open_case
from course.mystery.effects import ALLOWED
from course.mystery.families import WEAK, sites_for
from course.mystery.generate import KIND_WEIGHTS, CaseSpec, generate

MAX_DEAL = 200  # a large room
SEED_SPACE = 10**9  # seeds a deal draws from, at random: no neighbour to guess
MAX_DRAWS = 20_000  # per learner before a pair may repeat: the rarest pair is ~1 draw in 370, and
# a draw costs ~0.2 ms (a spec, no training), so a miss is never seen and a deal stays quick


@functools.cache
def pairs() -> frozenset[tuple[str, str]]:
    """Every (op, condition) pair the generator can draw: a deal's pool."""
    found = set()
    for kind in KIND_WEIGHTS:
        for site in sites_for(kind):
            for op in site.ops:
                if [e for e in site.effects or ALLOWED[kind] if (op, e) not in WEAK]:
                    found.add((f"{op}_", kind))
    return frozenset(found)


def _pair(spec: CaseSpec) -> tuple[str, str]:
    return spec.bug.op, spec.bug.trigger.kind


def deal(count: int, draw=None) -> list[int]:
    """`count` random seeds whose cases share no (op, condition) pair (until the pool of
    `pairs()` is used up; then a new round of the pool begins). Trains nothing."""
    require_int("--deal", count, 1, MAX_DEAL)
    draw = draw or (lambda: secrets.randbelow(SEED_SPACE))
    seeds: list[int] = []
    used: set[tuple[str, str]] = set()
    while len(seeds) < count:
        if used >= pairs():
            used = set()  # every pair handed out: a new round
        for _ in range(MAX_DRAWS):
            seed = draw()
            pair = _pair(generate(seed))
            if seed not in seeds and pair not in used:
                break
        seeds.append(seed)
        used.add(pair)
    return seeds


def _head(spec: CaseSpec) -> str:
    bug = spec.bug
    return (
        f"{bug.op} on {bug.trigger.describe(bug.op)} ({bug.effect}); "
        f"{spec.design.family}, habit {spec.site.habit}: {spec.design.hit}"
    )


def key_lines(seed: int) -> list[str]:
    """The instructor's key for one seed: what the case is, its reference repro and fix.

    A seed opens its first draw unless that draw's run shows no symptom (rare: telling would
    mean training, which a deal never does), then the next one; the learner's brief then says
    "draw 2", and the key names each later draw's culprit and condition under that name."""
    spec = generate(seed)
    later = [
        f"  if the brief says 'seed {seed}, draw {n + 1}': {_head(generate(seed, n))}"
        for n in range(1, REDRAWS)
    ]
    return [
        f"seed {seed}: {_head(spec)}",
        "  repro:",
        textwrap.indent(spec.repro.strip(), "    "),
        "  fix:",
        textwrap.indent(spec.fix.strip(), "    "),
        *later,
        "",
    ]


def _writable(key: Path) -> None:
    """Refuse a key file that cannot be written, before any work."""
    folder = key.expanduser().resolve().parent
    if not folder.is_dir():
        raise CourseError(f"--key {key}: the folder {folder} does not exist; create it first")
    if key.is_dir():
        raise CourseError(f"--key {key} is a folder; give a file name, e.g. {key}/key.txt")


def _deal(count: int, key: Path | None) -> int:
    if key is not None:
        _writable(key)
    seeds = deal(count)
    print("Hand one seed to each learner (notebook 10: open_case(seed=...)):")
    print("\n".join(f"  {seed}" for seed in seeds))
    lines = [line for seed in seeds for line in key_lines(seed)]
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
