"""One exception type for every mistake a learner can make with the course's tools.

Why a dedicated type: widgets catch it and show its text in place of a traceback, and tests can
assert that bad input produces *this* error (with a message saying what was wrong and what is
allowed) rather than a deep failure inside torch or matplotlib.
"""

from __future__ import annotations

from collections.abc import Iterable


class CourseError(ValueError):
    """A clear, specific complaint about the learner's input or environment."""


def require_choice(name: str, value: object, allowed: Iterable[object]) -> None:
    """Raise CourseError unless `value` is one of `allowed`, listing what is allowed."""
    options = list(allowed)
    if value not in options:
        listed = ", ".join(repr(o) for o in options)
        raise CourseError(f"{name}={value!r} is not allowed; choose one of: {listed}")


def require_range(name: str, value: float, low: float, high: float) -> None:
    """Raise CourseError unless low <= value <= high."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not (low <= value <= high):
        raise CourseError(f"{name}={value!r} is out of range; allowed: {low} to {high}")
