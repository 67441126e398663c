"""`python -m course COMMAND ...`: the course's command-line tools.

Each command lives in the module that owns its concept and exposes `cli(argv) -> int`; this file
only routes, importing a module when its command is used (so `doctor` works even where torch
is broken). No command's module imports ipywidgets: every command runs without the widget stack
(`tests/test_without_widgets.py`), and the doctor reports it missing instead of dying of it.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "doctor": ("course.doctor", "report on this machine's readiness for each notebook"),
    "plateau": ("course.story.cli", "reproduce the loss plateau on the emulated MPS device"),
    "mps-check": ("course.mps_check", "on a real Mac: does this torch still drop the writes?"),
    "audit": ("course.audit.cli", "find kernels that mishandle non-contiguous outputs"),
    "progress": ("course.start.tracker", "your exercise progress; --collect DIR for a workshop"),
    "mystery": ("course.mystery", "open an unseen bug case: its brief, then its training run"),
}


def usage() -> str:
    """The list of commands."""
    lines = ["usage: python -m course COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a command's `cli(argv)`."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return module.cli(rest)


if __name__ == "__main__":
    sys.exit(main())
