"""Watching a learner's function run: which ready-made helpers it called to answer for it.

Why: a ready-made answer (the course's own helper, torch's optimizer) wrapped in a function of
the learner's passes every comparison and teaches nothing, so the engine names it instead.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any


@contextlib.contextmanager
def ready_made(functions: Mapping[str, Callable]) -> Iterator[list[str]]:
    """The names (keys of `functions`) of those called inside the block, in call order.

    Why: a ready-made answer (the course's own helper, torch's optimizer) wrapped in a function
    of the learner's passes every comparison and teaches nothing. A profile hook (sys.setprofile,
    as a profiler uses) sees every Python call, so a helper called through a lambda or another
    import route is seen too; any hook already installed keeps receiving events.
    """
    codes = {inspect.unwrap(function).__code__: name for name, function in functions.items()}
    seen: list[str] = []
    previous = sys.getprofile()

    def hook(frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in codes:
            seen.append(codes[frame.f_code])
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(hook)
    try:
        yield seen
    finally:
        sys.setprofile(previous)


def learner_result(measure: Callable[[], object]) -> object:
    """One result of the learner's function for a ready-made table that follows its check, or
    what stopped it: a table cell, never a crash (Run All in an untouched learner copy reaches
    such a table before the function is written, and the text after it reads the learner's own
    results, never values left blank)."""
    try:
        return measure()
    except NotImplementedError:
        return "not written yet"
    except Exception as exc:  # the learner's function failing: shown in its cell, not raised
        return f"raised {type(exc).__name__}"
