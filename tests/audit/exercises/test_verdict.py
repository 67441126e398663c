"""08.verdict: each known wrong judge fails, and the feedback names its real cause."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from course.audit import exercises  # noqa: F401  (registers 08's exercises)
from course.exercises import check
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


# Right judges in other styles than the reference's: each must pass.
def _unchanged_first(before, after, expected):
    same = torch.where(before.isnan(), after.isnan(), after == before)
    if torch.allclose(after, expected, equal_nan=True):
        return "ok"
    return "silent-no-write" if bool(same.all()) else "wrong-values"


def _numpy(before, after, expected):
    b, a, e = before.numpy(), after.numpy(), expected.numpy()
    if np.allclose(a, e, equal_nan=True):
        return "ok"
    return "silent-no-write" if np.array_equal(a, b, equal_nan=True) else "wrong-values"


def _isclose_exact_unchanged(before, after, expected):
    if torch.isclose(after, expected, equal_nan=True).all():
        return "ok"
    if torch.isclose(after, before, rtol=0, atol=0, equal_nan=True).all():
        return "silent-no-write"
    return "wrong-values"


def _float64_and_zero_tolerance(before, after, expected):
    if torch.allclose(after.double(), expected.double(), equal_nan=True):
        return "ok"
    if torch.allclose(after, before, rtol=0.0, atol=0.0, equal_nan=True):
        return "silent-no-write"
    return "wrong-values"


def _python_loop(before, after, expected):
    def same(x, y):
        return x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))

    if torch.allclose(after, expected, equal_nan=True):
        return "ok"
    pairs = zip(after.flatten().tolist(), before.flatten().tolist(), strict=True)
    return "silent-no-write" if all(same(x, y) for x, y in pairs) else "wrong-values"


def _nan_masks_and_equal(before, after, expected):
    rest = ~before.isnan()
    same_nans = torch.equal(after.isnan(), before.isnan())
    unchanged = same_nans and torch.equal(after[rest], before[rest])
    if torch.allclose(after, expected, equal_nan=True):
        print("matches expected")
        return "ok"
    return "silent-no-write" if unchanged else "wrong-values"


def _assert_close_with_allclose_tolerances(before, after, expected):
    try:
        torch.testing.assert_close(after, expected, rtol=1e-5, atol=1e-8, equal_nan=True)
        return "ok"
    except AssertionError:
        pass
    try:
        torch.testing.assert_close(after, before, rtol=0, atol=0, equal_nan=True)
        return "silent-no-write"
    except AssertionError:
        return "wrong-values"


def _same_bytes(before, after, expected):
    if after.allclose(expected, equal_nan=True):
        return "ok"
    same = torch.equal(after.contiguous().view(torch.uint8), before.contiguous().view(torch.uint8))
    return "silent-no-write" if same else "wrong-values"


@pytest.mark.parametrize(
    "judge",
    [
        _unchanged_first,
        _numpy,
        _isclose_exact_unchanged,
        _float64_and_zero_tolerance,
        _python_loop,
        _nan_masks_and_equal,
        _assert_close_with_allclose_tolerances,
        _same_bytes,
    ],
)
def test_right_judges_in_other_styles_pass(judge):
    verdict = check("08.verdict", judge)
    assert verdict.passed, verdict.message


def test_assert_close_defaults_are_told_their_float32_atol():
    def judge(before, after, expected):
        try:
            torch.testing.assert_close(after, expected, equal_nan=True)
            return "ok"
        except AssertionError:
            same = torch.where(before.isnan(), after.isnan(), after == before)
            return "silent-no-write" if bool(same.all()) else "wrong-values"

    verdict = check("08.verdict", judge)
    assert not verdict.passed and "assert_close's default for float32" in verdict.message
