"""08.random_verdict: each known wrong judge fails with its cause, and the hidden draws sit far
from any sensible threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from course.audit.exercises import random_verdict
from course.audit.judge import ks_distance
from course.exercises import check
from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
RANDOM_CAUSES = (
    "pytorch#166856",  # exact values compared with the sample
    "sorted or not",  # sorted values compared
    "NaN == NaN is False",  # unwritten tested with ==
    "smallest value, not NaN",  # unwritten tested with isnan only
    "'silent-no-write' means none was",  # any unwritten element called silent-no-write
    "'ok' needs every element written",  # unwritten elements ignored
    "coverage alone is not enough",  # no distribution test
    "not its mean",  # means compared
    "too loose",  # KS threshold 0.5
    "mean 0 and standard deviation 1",  # a test for the standard normal only
    "not int64's smallest value",  # the poison hard-coded as int64's minimum
    "not with isnan",  # partial writes found with isnan only
    "however few were",  # mostly unwritten called silent-no-write
    "a mean and a spread are not a distribution",  # mean and std compared
    "keep the threshold at 0.1",  # KS threshold 0.3
    "or a normal draw of your own",  # KS against a normal draw, not the sample
    "an integer output needs the distribution test too",  # ints fully written taken for ok
    "a negative draw is no poison",  # int poison taken to be any negative value
    "the auditor's own course.audit.judge.unchanged",  # the course's unwritten test
)


@pytest.mark.parametrize(
    ("name", "index", "cause"), corpus_cases({"08.random_verdict": RANDOM_CAUSES})
)
def test_each_wrong_answer_is_told_its_own_mistake(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_random_judge_cases_are_far_from_any_sensible_threshold():
    """Correct draws stay well under KS 0.1 and wrong ones well over 0.2, so the prompt's 0.1
    (or a learner's 0.15 or 0.2) decides every case the same way."""
    for label, case in random_verdict._random_cases().items():
        if case.after.isnan().any() or bool((case.after == case.before).any()):
            continue
        distance = ks_distance(case.after.flatten().double(), case.expected.flatten().double())
        assert distance < 0.06 if case.want == "ok" else distance > 0.25, (label, distance)


# Right random judges in other styles than the reference's: each must pass.
def _counted(before, after, sample):
    same = after == before
    if before.is_floating_point():
        same = torch.where(before.isnan(), after.isnan(), same)
    left = int(same.sum())
    if left == after.numel():
        return "silent-no-write"
    if left:
        return "wrong-values"
    return "ok" if ks_distance(after, sample) < 0.1 else "wrong-values"


def _numpy_ks(before, after, sample):
    a, b = after.numpy().ravel(), before.numpy().ravel()
    left = (a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else a == b
    if left.all():
        return "silent-no-write"
    if left.any():
        return "wrong-values"
    x, y = np.sort(a.astype(np.float64)), np.sort(sample.numpy().ravel().astype(np.float64))
    grid = np.concatenate([x, y])
    cdf_x = np.searchsorted(x, grid, side="right") / len(x)
    cdf_y = np.searchsorted(y, grid, side="right") / len(y)
    return "ok" if np.abs(cdf_x - cdf_y).max() < 0.1 else "wrong-values"


def _written_mask_and_own_ks(before, after, sample):
    written = (after != before) & ~(after.isnan() & before.isnan())
    if not written.any():
        return "silent-no-write"
    if not written.all():
        return "wrong-values"
    x = after.flatten().double().sort().values
    y = sample.flatten().double().sort().values
    grid = torch.cat([x, y])
    cdf_x = torch.searchsorted(x, grid, right=True) / len(x)
    cdf_y = torch.searchsorted(y, grid, right=True) / len(y)
    return "ok" if (cdf_x - cdf_y).abs().max().item() < 0.1 else "wrong-values"


def _python_lists(before, after, sample):
    pairs = zip(after.flatten().tolist(), before.flatten().tolist(), strict=True)
    kept = [x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y)) for x, y in pairs]
    if all(kept):
        return "silent-no-write"
    if any(kept):
        return "wrong-values"
    distance = ks_distance(after.reshape(-1).to(torch.float64), sample.reshape(-1).double())
    print(f"KS = {distance:.3f}")
    return "wrong-values" if distance >= 0.1 else "ok"


def _all_in_float64(before, after, sample):
    a, b = after.double(), before.double()
    left = (a == b) | (a.isnan() & b.isnan())
    if left.all():
        return "silent-no-write"
    if left.any():
        return "wrong-values"
    return "ok" if ks_distance(a, sample.double()) < 0.1 else "wrong-values"


@pytest.mark.parametrize(
    "judge", [_counted, _numpy_ks, _written_mask_and_own_ks, _python_lists, _all_in_float64]
)
def test_right_random_judges_in_other_styles_pass(judge):
    verdict = check("08.random_verdict", judge)
    assert verdict.passed, verdict.message
