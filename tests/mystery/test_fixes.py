"""Every reference fix makes its scenario train on the buggy device; no fix does not."""

from __future__ import annotations

import pytest

from course.mystery.case import _judge_fix, open_case
from course.mystery.cases import CASES, POOL
from course.mystery.scenarios import SEED
from tests.mystery.runs import clean_run, planted_run

IDS = [spec.id for spec in POOL]


@pytest.mark.parametrize("case_id", IDS)
def test_the_reference_fix_passes_the_fix_checker(case_id):
    verdict = open_case(SEED, case_id=case_id).check_fix(CASES[case_id].fix)
    assert verdict.passed, verdict


@pytest.mark.parametrize("case_id", IDS)
def test_no_fix_fails_the_fix_checker(case_id):
    spec = CASES[case_id]
    buggy, clean = planted_run(spec.scenario, spec.bug), clean_run(spec.scenario)
    verdict = _judge_fix(buggy, clean, spec.symptom.shows(buggy, clean))
    assert not verdict.passed
