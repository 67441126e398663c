"""03.adam_step: bitwise like torch means torch's own ops, and every wrong answer is told why."""

from __future__ import annotations

from course.exercises import check
from tests.adam.exercises.corpus_stepping import CORPORA, flawed_step
from tests.corpus import corpus_tests

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_a_last_bit_difference_shows_every_digit():
    """Six digits printed yours and torch's alike; the learner must see where they differ."""
    verdict = check("03.adam_step", flawed_step("mul_ and add_"))
    assert verdict.yours != verdict.expected
    assert verdict.yours.split("=")[0] == verdict.expected.split("=")[0]  # the same element


def test_a_non_function_is_refused():
    verdict = check("03.adam_step", 0.5)
    assert not verdict.passed and "function" in verdict.message
