"""04.is_contiguous: each wrong rule in the corpus is told what torch sees where it disagrees."""

from __future__ import annotations

import pytest

from course.exercises import check
from course.layout.calculator import Layout
from course.layout.exercises.contiguity import why_not, why_so
from tests.corpus import corpus_tests
from tests.layout.exercises.corpus_contiguity import CORPORA

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_a_rule_wrong_both_ways_hears_both():
    verdict = check("04.is_contiguous", lambda shape, stride: not stride or stride[-1] == 1)
    assert "you say contiguous where torch says not" in verdict.message
    assert "you say not contiguous where torch says it is" in verdict.message


def test_an_answer_that_is_not_a_bool_is_told_so():
    verdict = check("04.is_contiguous", lambda shape, stride: 1)
    assert "return True or False" in verdict.message


@pytest.mark.parametrize(
    ("layout", "words"),
    [
        (Layout.strided((2, 3), (0, 1)), "stride 0"),
        (Layout.strided((2, 3), (1, 2)), "not in row-major order"),
        (Layout.strided((2, 3), (6, 1)), "gaps"),
        (Layout.strided((3, 2), (1, 1)), "overlap"),
    ],
)
def test_what_torch_sees_in_a_non_contiguous_layout(layout, words):
    assert words in why_not(layout)


def test_what_makes_a_layout_contiguous_anyway():
    assert "no elements" in why_so(Layout.strided((0, 3), (9, 9)))
    assert "one element" in why_so(Layout.strided((), ()))
    assert "dim 0 has size 1" in why_so(Layout.strided((1, 3), (7, 1)))
