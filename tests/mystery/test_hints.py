"""The mystery's hints: methods to try, never the answer."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.mystery import OPS
from course.mystery.conditions import CONDITIONS
from course.mystery.hints import STEPS, hint_text


def test_hints_point_to_methods_never_to_an_answer():
    for step in STEPS:
        words = set(step.replace("(", " ").replace(")", " ").replace(",", " ").split())
        assert not words & set(OPS) and not words & (set(CONDITIONS) - {"foreach"}), step
    assert hint_text(1).startswith(f"Hint 1/{len(STEPS)}")
    with pytest.raises(CourseError):
        hint_text(0)
