"""What 08's two judges share: the first wrong verdict is told what is true of that output."""

from __future__ import annotations

import torch

from course.audit import judge
from course.audit.exercises.common import VerdictCase, judged

BEFORE = torch.zeros(3)
CASES = {
    "an untouched output": VerdictCase(
        (BEFORE, BEFORE.clone(), torch.ones(3)), "silent-no-write", "nothing was written"
    ),
    "a right output": VerdictCase(
        (BEFORE, torch.ones(3), torch.ones(3)), "ok", "it holds the answer"
    ),
}


def test_a_right_judge_passes_and_a_constant_one_is_told_what_is_true():
    def right(before, after, expected):
        return "silent-no-write" if torch.equal(before, after) else "ok"

    assert judged(right, CASES, "done").passed
    verdict = judged(lambda before, after, expected: "ok", CASES, "done")
    assert not verdict.passed and "an untouched output" in verdict.message
    assert "nothing was written" in verdict.message


def test_a_judge_borrowing_the_auditors_own_is_told_so():
    verdict = judged(lambda b, a, e: judge.unchanged(a, b).all() and "ok", CASES, "done")
    assert not verdict.passed and "the auditor's own" in verdict.message


def test_a_verdict_off_the_list_is_refused():
    verdict = judged(lambda b, a, e: "fine", CASES, "done")
    assert not verdict.passed and "return 'ok', 'silent-no-write'" in verdict.message
