"""Known failures as strict xfails: a named list that can only shrink.

A policy test that fails today for some notebooks (or exercises) lists them by name; each list
entry becomes a strict xfail, so an entry that starts passing fails the run until someone takes
it off the list, and a new failure is never hidden.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path

import pytest


def listed(
    items: Iterable[object],
    known: Collection[str],
    reason: str,
    name: Callable[[object], str] = lambda item: item.name if isinstance(item, Path) else str(item),
) -> list[object]:
    """Parametrize values: the items whose name is in `known` marked as a strict xfail."""
    mark = pytest.mark.xfail(reason=reason, strict=True)
    return [pytest.param(item, marks=mark) if name(item) in known else item for item in items]
