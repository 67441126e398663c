"""08.verdict: each known wrong judge fails, and the feedback names its real cause."""

from __future__ import annotations

import pytest

from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
VERDICT_CAUSES = (
    "does not turn to zeros",  # "all zeros" taken for "never written"
    "a write happened, a wrong one",  # anything not exactly expected called unwritten
    "NaN == NaN is False",  # unchanged tested with ==
    "*every* element kept its value",  # one unchanged element taken for a lost write
    "the right answer itself has NaN",  # allclose without equal_nan
    "3% off",  # rtol=0.05
    "cannot see a scramble",  # sorted values compared
    "comparing one element or the first rows",  # first row compared
    "NaN was written over numbers",  # NaN garbage taken for unchanged
    "not exact equality",  # bitwise comparison with another kernel's answer
    "(nan_to_num) makes the poison look like the right answer",  # NaN -> 0, then allclose
    "(nan_to_num) makes it look unchanged",  # NaN -> 0, then unchanged
    "an absolute tolerance such as atol=1e-3",  # atol=1e-3
    "a tolerance that lets 0.2% pass",  # 1% relative
    "compare with before bit for bit",  # allclose(after, before) for unchanged
    "Sums, means and sorted values of before",  # sums compared for unchanged
    "silent-no-write means not one element changed",  # 90% unchanged taken for unchanged
    "not only for a poison that fills the output",  # NaN-aware only when before is all NaN
    "skips the elements where expected is NaN",  # allclose where expected is a number
    "such as rtol=1e-3",  # 0.1% relative
    "a max difference under 1e-4",  # an absolute bound on the largest difference
    "the auditor's own course.audit.judge.judge",  # the course's judge, wrapped
)


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases({"08.verdict": VERDICT_CAUSES}))
def test_each_wrong_answer_is_told_its_own_mistake(name, index, cause):
    assert_told_its_cause(name, index, cause)
