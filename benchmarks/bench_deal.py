"""How long `python -m course mystery --deal 25` takes once the course is imported.

    python benchmarks/bench_deal.py            # 25 learners, 5 repeats
    python benchmarks/bench_deal.py 200 3

The deal draws each case's spec (`course.mystery.generate`), never trains one (Note [Dealing
trains nothing] in course/mystery/cli.py), so its time is milliseconds per learner and does
not grow with the machine's load the way training did (22 minutes on a crowded machine before
issue 36). The first repeat includes generating fresh specs; later ones hit generate's cache,
so the cache is cleared before each repeat. Import time (torch, the course) is printed apart.
"""

from __future__ import annotations

import sys
import time

started = time.perf_counter()
from course.mystery.cli import deal, key_lines  # noqa: E402
from course.mystery.generate import generate  # noqa: E402

imported = time.perf_counter() - started


def main(count: int = 25, repeats: int = 5) -> None:
    print(f"import: {imported:.1f} s")
    times = []
    for _ in range(repeats):
        generate.cache_clear()
        start = time.perf_counter()
        seeds = deal(count)
        lines = [line for seed in seeds for line in key_lines(seed)]
        times.append(time.perf_counter() - start)
    assert len(seeds) == count and lines
    print(f"deal {count} with its key: best {min(times):.3f} s, worst {max(times):.3f} s")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
