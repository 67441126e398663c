"""02.did_not_move and 02.grad_check: each shortcut is rejected, and told which one it took."""

from __future__ import annotations

import pytest

from course.isolation.exercises import measuring
from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
CAUSES = {
    "02.did_not_move": (
        "one-ulp change",  # allclose
        "one-ulp change",  # max |diff| < 1e-6
        "not the layout",  # compares strides
        "not identity",  # before is after
        "moved to other places",  # compares sums
        "compare every element",  # the first element only
        "NaN garbage",  # not any(|diff| > 0)
        "bring both to the CPU",  # torch.equal across devices
    ),
    "02.grad_check": (
        "largest signed value",  # no abs
        "1e-12 is not 0",  # "zero" as |g| < 1e-8
        "number of zeros",  # a count, not a fraction
        "NON-zero",  # the non-zero fraction
        "first row's largest",  # g[0] only
        "mean magnitude",  # a mean, not the max
        "rows that are all zero",  # the fraction of zero rows
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_zero_pattern_is_measured():
    assert measuring._zero_pattern() == "whole rows"
