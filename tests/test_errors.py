"""The one error type: messages name the bad value and what is allowed."""

from __future__ import annotations

import pytest

from course.errors import CourseError, require_choice, require_range


def test_choice_lists_what_is_allowed():
    with pytest.raises(
        CourseError, match=r"device='gpu' is not allowed; choose one of: 'cpu', 'emps'"
    ):
        require_choice("device", "gpu", ["cpu", "emps"])
    require_choice("device", "cpu", ["cpu", "emps"])


@pytest.mark.parametrize("value", [0, 11, "3", None, float("nan"), True])
def test_range_refuses_out_of_range_and_non_numbers(value):
    with pytest.raises(CourseError, match="allowed: 1 to 10"):
        require_range("steps", value, 1, 10)


def test_course_error_is_a_value_error():
    assert issubclass(CourseError, ValueError)
