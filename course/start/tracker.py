"""Progress across the whole course: the widget of notebook 00 and `python -m course progress`.

`course.journal` reads and summarises a learner's saved events; this module adds what only a
lesson-level module may know, the list of every exercise in the course (importing every lesson),
so the tables can say "2/3 done" and show what is not started yet. The mystery case's checks
(`journal.CASE_CHECKS`) are listed with them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from course import journal
from course.exercises import all_exercises
from course.markup import html_table, message_html

if TYPE_CHECKING:
    from course.ui import Panel


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


def cli(argv: list[str]) -> int:
    """Print this learner's progress table, or (`--collect DIR`) a whole room's."""
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
        "--seen", action="store_true", help="only exercises you checked (fast: imports no lesson)"
    )
    args = p.parse_args(argv)
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
