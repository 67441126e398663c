"""The one error type and the validators: messages name the bad value and what is allowed."""

from __future__ import annotations

import pytest
import torch

from course.errors import (
    MAX_DIMS,
    MAX_SEED,
    CourseError,
    require_choice,
    require_int,
    require_range,
    require_seed,
    require_shape,
)


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


def test_require_int_refuses_bools_and_floats():
    assert require_int("n", 3, 1, 5) == 3
    for bad in (True, 2.0, "2", 0, 6):
        with pytest.raises(CourseError, match="n=.* is not allowed: choose an integer from 1 to 5"):
            require_int("n", bad, 1, 5)


def test_require_seed_takes_what_a_torch_generator_takes():
    assert require_seed(0) == 0 and require_seed(MAX_SEED) == MAX_SEED
    torch.Generator().manual_seed(MAX_SEED)  # the largest seed allowed works in torch
    for bad in (-1, MAX_SEED + 1, 1.0, "3", True):
        with pytest.raises(CourseError, match=f"seed=.* from 0 to {MAX_SEED}"):
            require_seed(bad)


@pytest.mark.parametrize("bad", [(0, 4), (3,), (3, True), (3, 4.0), "3x4", None, (5000, 5000)])
def test_require_shape_bounds_the_rank_the_sizes_and_the_product(bad):
    assert require_shape("s", (3, 4), dims=2) == (3, 4)
    with pytest.raises(CourseError, match="s=.* is not allowed: give a tuple of 2 whole numbers"):
        require_shape("s", bad, dims=2)


def test_require_shape_without_a_rank_allows_up_to_max_dims():
    assert require_shape("s", [2] * MAX_DIMS) == (2,) * MAX_DIMS
    with pytest.raises(CourseError, match=f"at most {MAX_DIMS} whole numbers"):
        require_shape("s", (2,) * (MAX_DIMS + 1))


def test_require_shape_can_allow_empty_sizes_and_drop_the_element_bound():
    assert require_shape("s", (0, 3), smallest=0) == (0, 3)
    assert require_shape("s", (10**5, 10**5), max_elements=None) == (10**5, 10**5)
    with pytest.raises(CourseError, match=r"each >= 0"):
        require_shape("s", (-1, 3), smallest=0, max_elements=None)
    with pytest.raises(CourseError, match="at most 12 elements in all"):
        require_shape("s", (4, 4), max_elements=12)
