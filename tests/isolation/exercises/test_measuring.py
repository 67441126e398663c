"""02.did_not_move and 02.grad_check: each shortcut is rejected, and told which one it took."""

from __future__ import annotations

from course.exercises import check
from course.isolation.exercises import measuring
from tests.corpus import corpus_tests
from tests.isolation.exercises.corpus_measuring import CORPORA

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_zero_pattern_is_measured():
    assert measuring._zero_pattern() == "whole rows"


def test_a_function_that_fails_on_the_device_is_told_where_it_raised():
    verdict = check("02.grad_check", lambda g: (g.abs().max(), (g == 0).double().mean()))
    assert not verdict.passed
    assert "(on emps:0) your grad_check raised TypeError" in verdict.message
    assert "checking your answer raised" not in verdict.message


def test_a_comparison_that_raises_something_else_is_told_what_it_raised():
    """A KeyError is no device's refusal: `check` names it as it names any crash."""
    verdict = check("02.did_not_move", lambda before, after: {}["x"])
    assert not verdict.passed and "raised KeyError" in verdict.message
