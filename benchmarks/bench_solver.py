"""How many experiments the scripted investigation needs per band of cases (issue 36).

    python benchmarks/bench_solver.py          # 80 random cases
    python benchmarks/bench_solver.py 200

`course.mystery.solver.investigate` solves a case by the course's method and counts its
experiments; tests/mystery/test_solver.py holds the floors. This prints, per band, how many
cases, the fewest, the median and the most experiments, the cases it did not solve (there must
be none), and the seconds it took (one run: a ratio of bands, not a timing to assert).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections import defaultdict

from course.mystery.generate import generate
from course.mystery.solver import investigate


def main(count: int = 80) -> None:
    counts: dict[str, list[int]] = defaultdict(list)
    unsolved = []
    start = time.perf_counter()
    for seed in random.Random(7).sample(range(10**6), count):
        spec = generate(seed)
        done = investigate(spec)
        counts[spec.band].append(done.count)
        if not done.solved(spec):
            unsolved.append(seed)
    seconds = time.perf_counter() - start
    for band, found in sorted(counts.items()):
        print(
            f"{band:<11} {len(found):>3} cases: experiments min {min(found)}, median "
            f"{statistics.median(found):g}, max {max(found)}"
        )
    print(f"unsolved: {unsolved or 'none'}; {seconds:.0f} s for {count} cases")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
