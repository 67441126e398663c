"""Progress across the whole course: the widget of notebook 00 and `python -m course progress`.

`course.journal` reads and summarises a learner's saved events; this module adds what only a
lesson-level module may know, the list of every exercise in the course (importing every lesson),
so the tables can say "2/3 done" and show what is not started yet. The mystery case's checks
(`journal.CASE_CHECKS`) are listed with them.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from course import journal
from course.exercises import all_exercises
from course.markup import html_table, message_html

if TYPE_CHECKING:
    from course.ui import Panel

WATCH_SECONDS = (1, 3600)  # a refresh at most every second, at least every hour
CLEAR_SCREEN = "\033[2J\033[H"  # ANSI: clear the terminal, cursor to the top left


def known_checks() -> list[str]:
    """Every check in the course: the lessons' exercises and the mystery case's three."""
    return [*all_exercises(), *journal.CASE_CHECKS]


def progress_panel() -> Panel:
    """Your progress per notebook, from the saved journal; Refresh re-reads it.

    The widget stack is imported here only: `python -m course progress` prints the same table
    on a machine without ipywidgets."""
    from course.ui import Drawing, Panel

    def draw() -> Drawing:
        events = journal.load()
        known = known_checks()
        note = message_html(f"Saved in {journal.progress_file()}", "info")
        if not events:
            note = message_html(
                "No exercise checked yet: your first check(...) will appear here "
                f"(saved in {journal.progress_file()}).",
                "info",
            )
        rows = journal.notebook_rows(events, known)
        return Drawing(html=note + html_table(rows))

    return Panel({}, draw, title="Your progress", button="Refresh", rereads=True)


def watch_seconds(text: str) -> int:
    """`--watch N`, checked: whole seconds within WATCH_SECONDS (0 would redraw in a busy loop,
    a day would look like a frozen screen)."""
    low, high = WATCH_SECONDS
    try:
        seconds = int(text)
    except ValueError:
        seconds = None
    if seconds is None or not low <= seconds <= high:
        raise argparse.ArgumentTypeError(
            f"--watch takes whole seconds from {low} to {high}, got {text!r}"
        )
    return seconds


def watch(
    directory: Path,
    every: int,
    out: TextIO | None = None,
    sleep: Callable[[float], object] = time.sleep,
) -> int:
    """Redraw the room's table every `every` seconds until Ctrl-C, which ends it quietly.

    An instructor leaves this running on a second screen during a workshop: the journals grow
    as learners check, so each frame re-reads them. On a terminal each frame replaces the last
    (the screen is cleared); piped into a file, frames follow each other. A folder that is
    missing at the start is an error (exit 2); one that goes missing later is shown in the frame,
    since the next one may find it again. `out` (stdout by default) and `sleep` are injectable
    so tests need not wait."""
    out = sys.stdout if out is None else out
    clear = CLEAR_SCREEN if out.isatty() else "\n"
    try:
        for frame in itertools.count():
            try:
                table = journal.collect_table(directory)
            except FileNotFoundError as exc:
                if frame == 0:
                    print(exc, file=sys.stderr)
                    return 2
                table = str(exc)
            stamp = time.strftime("%H:%M:%S")
            out.write(f"{clear}{stamp}, every {every} s (Ctrl-C stops)\n\n{table}\n")
            out.flush()
            sleep(every)
    except KeyboardInterrupt:
        out.write("\nstopped watching\n")
    return 0


def cli(argv: list[str]) -> int:
    """Print this learner's progress table, or (`--collect DIR`) a whole room's, once or
    (`--watch N`) every N seconds."""
    p = argparse.ArgumentParser(
        prog="python -m course progress",
        description="your exercise progress per notebook, saved by every check(...)",
    )
    p.add_argument(
        "--collect",
        type=Path,
        metavar="DIR",
        help="summarise many learners' files: DIR/NAME.jsonl or DIR/NAME/.../progress.jsonl",
    )
    p.add_argument(
        "--watch",
        type=watch_seconds,
        metavar="N",
        help=f"with --collect: redraw every N seconds ({WATCH_SECONDS[0]}-{WATCH_SECONDS[1]}) "
        "until Ctrl-C",
    )
    p.add_argument(
        "--seen", action="store_true", help="only exercises you checked (fast: imports no lesson)"
    )
    args = p.parse_args(argv)
    if args.watch is not None and args.collect is None:
        p.error("--watch redraws a room's table: give it --collect DIR too")
    if args.watch is not None:
        return watch(args.collect, args.watch)
    if args.collect is not None:
        try:
            print(journal.collect_table(args.collect))
        except FileNotFoundError as exc:
            print(exc, file=sys.stderr)
            return 2
        return 0
    known = [] if args.seen else known_checks()
    print(f"progress file: {journal.progress_file()}\n")
    print(journal.progress_table(journal.load(), known))
    return 0
