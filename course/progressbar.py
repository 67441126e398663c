"""Progress of long runs: one callback signature, and a text bar that draws it on stderr.

Training runs, sweeps, audits and benchmarks take seconds to minutes; a learner should see that
something is happening. Every long function takes `progress: Progress | None` and calls it as
`progress(done, total, note)`, the note a few words on the latest step ("loss 0.1234",
"aten::addcmul_"). `bar()` draws it in a terminal or a notebook, on stderr so that checked
notebook outputs (stdout) stay deterministic; `course.ui.Panel.progress` shows it in a widget.
(A learner's saved exercise progress is another thing: `course.journal`.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable

Progress = Callable[[int, int, str], None]  # (done, total, note)


def bar(label: str, every: int = 20) -> Progress:
    """A progress callback that redraws a one-line bar on stderr, every `every` steps and last."""

    def show(done: int, total: int, note: str = "") -> None:
        if done % every and done != total:
            return
        width = 30
        filled = int(width * done / max(total, 1))
        line = f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {note}"
        sys.stderr.write(line.rstrip() + ("\n" if done == total else ""))
        sys.stderr.flush()

    return show
