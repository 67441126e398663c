"""Progress for long runs: a text bar on a terminal or in a notebook, silent when not wanted.

Training runs, sweeps and audits take seconds to minutes; a learner should see that something is
happening. The bar goes to stderr, so checked notebook outputs (stdout) stay deterministic.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def bar(label: str, every: int = 20) -> Callable[[int, int, float], None]:
    """A progress callback `(done, total, value)` that redraws a one-line bar on stderr."""

    def show(done: int, total: int, value: float = float("nan")) -> None:
        if done % every and done != total:
            return
        width = 30
        filled = int(width * done / max(total, 1))
        line = f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} loss {value:.4g}"
        sys.stderr.write(line + ("\n" if done == total else ""))
        sys.stderr.flush()

    return show
