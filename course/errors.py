"""One exception type for every mistake a learner can make, and the one home of the validators.

Why a dedicated type: widgets catch it and show its text in place of a traceback, and tests can
assert that bad input produces *this* error (with a message saying what was wrong and what is
allowed) rather than a deep failure inside torch or matplotlib. Why the validators live here:
every lesson bounds what a learner types the same way, with the same words, from this one place.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MAX_DIMS = 8  # more dims than any lesson needs; torch allows 64, a typo should not
MAX_TYPED_ELEMENTS = 1 << 24  # one tensor a learner sizes by hand: 64 MB in float32
MAX_SEED = 2**63 - 1  # a non-negative int64: every such seed suits torch.Generator.manual_seed


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


def require_int(name: str, value: object, low: int, high: int) -> int:
    """An integer (not a bool) in [low, high], or a CourseError naming the value and the range."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise CourseError(
            f"{name}={value!r} is not allowed: choose an integer from {low} to {high}"
        )
    return value


def require_seed(seed: object) -> int:
    """A seed for a private torch.Generator: an integer from 0 to MAX_SEED."""
    return require_int("seed", seed, 0, MAX_SEED)


def require_shape(
    name: str,
    shape: object,
    *,
    dims: int | None = None,
    smallest: int = 1,
    max_elements: int | None = MAX_TYPED_ELEMENTS,
) -> tuple[int, ...]:
    """A shape as a tuple of whole numbers >= `smallest`: exactly `dims` of them (at most
    MAX_DIMS when None), with at most `max_elements` elements in all (None: no bound); else a
    CourseError naming the value and what is allowed.

    Why not just `tuple(shape)`: a string such as "3,4" would become ('3', ',', '4'), a -1
    (which `view` accepts as "infer") would make a negative storage size, and a typo such as
    (100000, 100000) would ask for 40 GB.
    """
    count = f"at most {MAX_DIMS}" if dims is None else str(dims)
    ok = isinstance(shape, (tuple, list)) and (
        len(shape) == dims if dims is not None else len(shape) <= MAX_DIMS
    )
    ok = ok and all(isinstance(s, int) and not isinstance(s, bool) and s >= smallest for s in shape)
    if not ok or (max_elements is not None and math.prod(shape) > max_elements):
        bound = "" if max_elements is None else f", at most {max_elements:,} elements in all"
        raise CourseError(
            f"{name}={shape!r} is not allowed: give a tuple of {count} whole numbers, "
            f"each >= {smallest}{bound}"
        )
    return tuple(shape)
