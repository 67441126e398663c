"""03.adam_step: bitwise like torch means torch's own ops, and every wrong answer is told why."""

from __future__ import annotations

import pytest

from course.adam.exercises import stepping
from course.exercises import check
from tests.adam.exercises.corpus_stepping import CORPORA, flawed_step, reference
from tests.corpus import assert_accepted, assert_told_its_cause, right_params, wrong_params


@pytest.mark.parametrize(("name", "flaw"), wrong_params(CORPORA))
def test_each_wrong_answer_is_told_its_cause(name, flaw):
    assert_told_its_cause(name, flaw)


@pytest.mark.parametrize(("name", "how"), right_params(CORPORA))
def test_a_right_answer_written_another_way_passes(name, how):
    assert_accepted(name, how)


def test_a_last_bit_difference_shows_every_digit():
    """Six digits printed yours and torch's alike; the learner must see where they differ."""
    verdict = check("03.adam_step", flawed_step("mul_ and add_"))
    assert verdict.yours != verdict.expected
    assert verdict.yours.split("=")[0] == verdict.expected.split("=")[0]  # the same element


def test_a_non_function_is_refused():
    verdict = check("03.adam_step", 0.5)
    assert not verdict.passed and "function" in verdict.message


def test_every_hidden_problem_passes_the_reference_and_varies_a_named_parameter():
    problems = stepping.PROBLEMS
    for problem in problems:
        assert stepping.run_problem(reference(), problem) is None
    assert len({p.lr for p in problems}) >= 3 and len({p.eps for p in problems}) >= 3
    assert len({p.betas for p in problems}) >= 3 and len({len(p.shape) for p in problems}) == 3
    assert {"contiguous", "transposed", "step-sliced", "permuted"} <= {p.layout for p in problems}
    assert any(p.grad_layout and p.grad_layout != p.layout for p in problems)


def test_eps_placement_matters_on_the_zero_gradient_problem():
    """Exact zeros and eps = 1e-3 make eps inside the sqrt wrong by far more than rounding."""
    verdict = stepping.run_problem(flawed_step("eps inside the sqrt"), stepping.PROBLEMS[3])
    assert verdict is not None and "eps is inside the square root" in verdict.message
