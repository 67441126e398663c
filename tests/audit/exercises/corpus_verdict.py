"""08.verdict's test data: the notebook's judge, right judges written other ways, and wrong
judges keyed by the shortcut each takes, with the words its feedback must contain."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import torch

from course.audit import judge
from tests.corpus import Corpus


def reference():
    def verdict(before, after, expected):
        if torch.allclose(after, expected, equal_nan=True):
            return "ok"
        unchanged = (after == before) | (after.isnan() & before.isnan())
        if unchanged.all():
            return "silent-no-write"
        return "wrong-values"

    return verdict


# How a wrong judge matches `after` with `expected` ("same"), or with `before` ("kept")
SAME = {
    "allclose": lambda a, e: torch.allclose(a, e, equal_nan=True),
    "no NaN": lambda a, e: torch.allclose(a, e),
    "5%": lambda a, e: torch.allclose(a, e, rtol=0.05, equal_nan=True),
    "sorted": lambda a, e: torch.allclose(
        a.flatten().sort().values, e.flatten().sort().values, equal_nan=True
    ),
    "first row": lambda a, e: torch.allclose(a[0], e[0], equal_nan=True),
    "exact": lambda a, e: torch.equal(a.nan_to_num(0.5), e.nan_to_num(0.5)),
    "NaN as 0": lambda a, e: torch.allclose(a.nan_to_num(), e.nan_to_num()),
    "atol 1e-3": lambda a, e: torch.allclose(a, e, atol=1e-3, equal_nan=True),
    "1%": lambda a, e: torch.allclose(a, e, rtol=0.01, equal_nan=True),
    "0.1%": lambda a, e: torch.allclose(a, e, rtol=1e-3, equal_nan=True),
    "max diff 1e-4": lambda a, e: (
        torch.equal(a.isnan(), e.isnan()) and bool((a - e).abs().nan_to_num().max() < 1e-4)
    ),
    "where expected is a number": lambda a, e: torch.allclose(a[~e.isnan()], e[~e.isnan()]),
}
KEPT = {
    "nan-aware": lambda a, b: ((a == b) | (a.isnan() & b.isnan())).all(),
    "==": lambda a, b: (a == b).all(),
    "any": lambda a, b: ((a == b) | (a.isnan() & b.isnan())).any(),
    "NaN counts as old": lambda a, b: ((a == b) | a.isnan()).all(),
    "zeros": lambda a, b: not a.any(),
    "NaN as 0": lambda a, b: torch.equal(a.nan_to_num(), b.nan_to_num()),
    "allclose": lambda a, b: torch.allclose(a, b, equal_nan=True),
    "same sum": lambda a, b: bool(a.nansum() == b.nansum()) and torch.equal(a.isnan(), b.isnan()),
    "90%": lambda a, b: ((a == b) | (a.isnan() & b.isnan())).double().mean() > 0.9,
    "a poison fills it": lambda a, b: (
        bool(a.isnan().all()) if bool(b.isnan().all()) else torch.equal(a, b)
    ),
}


def judge_with(same: str = "allclose", kept: str = "nan-aware"):
    """The reference with one shortcut: how `after` is matched with `expected`, or with `before`."""

    def verdict(before, after, expected):
        if SAME[same](after, expected):
            return "ok"
        return "silent-no-write" if KEPT[kept](after, before) else "wrong-values"

    return verdict


def _exact_or_unwritten():
    def verdict(before, after, expected):  # anything not exactly expected called unwritten
        return "ok" if torch.equal(after, expected) else "silent-no-write"

    return verdict


def _the_auditors_judge():
    def verdict(before, after, expected):  # the course's own judge, wrapped
        return judge.judge(before, after, expected)[0]

    return verdict


def _assert_close_defaults():
    def verdict(before, after, expected):
        try:
            torch.testing.assert_close(after, expected, equal_nan=True)
            return "ok"
        except AssertionError:
            same = torch.where(before.isnan(), after.isnan(), after == before)
            return "silent-no-write" if bool(same.all()) else "wrong-values"

    return verdict


def _raises_on_integers():
    def verdict(before, after, expected):
        if after.dtype == torch.int64:
            raise TypeError("no ints here")
        return reference()(before, after, expected)

    return verdict


def _unchanged_asked_first():
    def verdict(before, after, expected):  # the notebook's trap: 'unchanged?' before 'matches?'
        if ((after == before) | (after.isnan() & before.isnan())).all():
            return "silent-no-write"
        return "ok" if torch.allclose(after, expected, equal_nan=True) else "wrong-values"

    return verdict


def _only_where_the_op_changes():
    def verdict(before, after, expected):  # judges only the elements expected differs from before
        moves = ~((expected == before) | (expected.isnan() & before.isnan()))
        a, b, e = after[moves], before[moves], expected[moves]
        if torch.allclose(a, e, equal_nan=True):
            return "ok"
        return "silent-no-write" if ((a == b) | (a.isnan() & b.isnan())).all() else "wrong-values"

    return verdict


WRONG = {
    "all zeros taken for never written": (
        partial(judge_with, kept="zeros"),
        "does not turn to zeros",
    ),
    "anything not exactly expected called unwritten": (
        _exact_or_unwritten,
        "a write happened, a wrong one",
    ),
    "unchanged tested with ==": (partial(judge_with, kept="=="), "NaN == NaN is False"),
    "one unchanged element taken for a lost write": (
        partial(judge_with, kept="any"),
        "*every* element kept its value",
    ),
    "allclose without equal_nan": (
        partial(judge_with, same="no NaN"),
        "the right answer itself has NaN",
    ),
    "rtol=0.05": (partial(judge_with, same="5%"), "3% off"),
    "sorted values compared": (partial(judge_with, same="sorted"), "cannot see a scramble"),
    "first row compared": (
        partial(judge_with, same="first row"),
        "comparing one element or the first rows",
    ),
    "NaN garbage taken for unchanged": (
        partial(judge_with, kept="NaN counts as old"),
        "NaN was written over numbers",
    ),
    "bitwise equality with another kernel's answer": (
        partial(judge_with, same="exact"),
        "not exact equality",
    ),
    "NaN turned to 0, then allclose with expected": (
        partial(judge_with, same="NaN as 0"),
        "(nan_to_num) makes the poison look like the right answer",
    ),
    "NaN turned to 0, then compared with before": (
        partial(judge_with, kept="NaN as 0"),
        "(nan_to_num) makes it look unchanged",
    ),
    "atol=1e-3": (
        partial(judge_with, same="atol 1e-3"),
        "an absolute tolerance such as atol=1e-3",
    ),
    "rtol=0.01": (partial(judge_with, same="1%"), "a tolerance that lets 0.2% pass"),
    "allclose(after, before) for unchanged": (
        partial(judge_with, kept="allclose"),
        "compare with before bit for bit",
    ),
    "sums compared for unchanged": (
        partial(judge_with, kept="same sum"),
        "Sums, means and sorted values of before",
    ),
    "90% unchanged taken for unchanged": (
        partial(judge_with, kept="90%"),
        "silent-no-write means not one element changed",
    ),
    "NaN-aware only when before is all NaN": (
        partial(judge_with, kept="a poison fills it"),
        "not only for a poison that fills the output",
    ),
    "allclose where expected is a number": (
        partial(judge_with, same="where expected is a number"),
        "skips the elements where expected is NaN",
    ),
    "rtol=1e-3": (partial(judge_with, same="0.1%"), "such as rtol=1e-3"),
    "an absolute bound on the largest difference": (
        partial(judge_with, same="max diff 1e-4"),
        "a max difference under 1e-4",
    ),
    "the auditor's judge, wrapped": (
        _the_auditors_judge,
        "the auditor's own course.audit.judge.judge",
    ),
    "assert_close's default tolerances": (
        _assert_close_defaults,
        "assert_close's default for float32",
    ),
    "'unchanged?' asked before 'matches?'": (
        _unchanged_asked_first,
        "Ask whether it matches expected first",
    ),
    "only the elements the op should change compared": (
        _only_where_the_op_changes,
        "looks only at the elements the op should change",
    ),
    "a bool instead of a verdict": (
        lambda: lambda before, after, expected: True,
        "return 'ok', 'silent-no-write' or 'wrong-values'",
    ),
    "raises on integer outputs": (
        _raises_on_integers,
        "for an integer output the op never wrote your function raised TypeError",
    ),
}


# Right judges in other styles than the reference's
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


RIGHT = {
    "unchanged computed first": lambda: _unchanged_first,
    "numpy": lambda: _numpy,
    "isclose, exact for unchanged": lambda: _isclose_exact_unchanged,
    "float64 and a zero tolerance": lambda: _float64_and_zero_tolerance,
    "a Python loop": lambda: _python_loop,
    "NaN masks and equal, printing": lambda: _nan_masks_and_equal,
    "assert_close with allclose's tolerances": lambda: _assert_close_with_allclose_tolerances,
    "the same bytes": lambda: _same_bytes,
}

CORPORA = (Corpus("08.verdict", reference, WRONG, RIGHT),)
