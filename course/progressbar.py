"""Progress of long runs: one callback signature, and a text bar that draws it.

Training runs, sweeps, audits and benchmarks take seconds to minutes; a learner should see that
something is happening. Every long function takes `progress: Progress | None` and calls it as
`progress(done, total, note)`, the note a few words on the latest step ("loss 0.1234",
"aten::addcmul_"). `bar()` draws it where the learner is looking:

- in a terminal, on stderr, redrawn in place with a carriage return, so that a command's
  output (stdout) stays what a script reads;
- in a notebook (a Jupyter kernel), as the cell's own plain output, updated in place: stderr
  there is a pink box that reads as an error. A stored notebook keeps the finished bar, without
  the note: the note's numbers depend on the machine, the finished bar does not.

`course.ui.Panel.progress` shows the same callback inside a widget. (A learner's saved
exercise progress is another thing: `course.journal`.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable

Progress = Callable[[int, int, str], None]  # (done, total, note)
WIDTH = 30  # characters of the bar itself


def line(label: str, done: int, total: int, note: str = "") -> str:
    """One drawing of the bar: `label [####......] done/total note`."""
    filled = int(WIDTH * done / max(total, 1))
    return f"{label} [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} {note}".rstrip()


def in_notebook() -> bool:
    """Whether this code runs in a Jupyter kernel (JupyterLab, VS Code, Colab), not a terminal.

    Looks only at what is already imported: a terminal never imports IPython for this."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def bar(label: str, every: int = 20) -> Progress:
    """A progress callback that redraws a one-line bar every `every` steps and at the end:
    in a notebook as the cell's output, elsewhere on stderr."""
    return _notebook_bar(label, every) if in_notebook() else _terminal_bar(label, every)


def _terminal_bar(label: str, every: int) -> Progress:
    def show(done: int, total: int, note: str = "") -> None:
        if done % every and done != total:
            return
        sys.stderr.write("\r" + line(label, done, total, note) + ("\n" if done == total else ""))
        sys.stderr.flush()

    return show


def _notebook_bar(label: str, every: int) -> Progress:
    """The bar as one display, updated in place.

    The display is created already showing the finished bar, and every redraw updates it. So
    what a notebook stores (the last update) and what a checker that ignores updates records
    (nbval: the first display) are the same text; a learner never sees the first state, as the
    first redraw replaces it at once."""
    from IPython.display import display

    handle = None

    def show(done: int, total: int, note: str = "") -> None:
        nonlocal handle
        if handle is None:
            handle = display(_plain(line(label, total, total)), raw=True, display_id=True)
        elif done % every and done != total:
            return
        handle.update(_plain(line(label, done, total, note if done < total else "")), raw=True)

    return show


def _plain(text: str) -> dict[str, str]:
    """A raw display bundle: plain text only, shown as ordinary output."""
    return {"text/plain": text}
