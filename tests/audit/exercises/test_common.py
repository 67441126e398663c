"""What both judges of notebook 08 share: a judge that answers something else, or raises, is
told so on the output where it happened."""

from __future__ import annotations

import torch

from course.audit import exercises  # registers 08's exercises (without importing every lesson)
from course.exercises import check


def test_a_judge_that_returns_something_else_is_told_the_three_verdicts():
    verdict = check("08.verdict", lambda before, after, expected: True)
    assert not verdict.passed
    assert "return 'ok', 'silent-no-write' or 'wrong-values'" in verdict.message


def test_a_judge_that_raises_is_told_on_which_output():
    def subtracts(before, after, expected):
        if after.dtype == torch.int64:
            raise TypeError("no ints here")
        return exercises.verdict._reference_verdict()(before, after, expected)

    verdict = check("08.verdict", subtracts)
    assert "for an integer output the op never wrote your function raised TypeError" in (
        verdict.message
    )
