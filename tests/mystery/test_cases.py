"""The pool: every case shows its symptom, its decoy shows the same one, and the brief is clean."""

from __future__ import annotations

import re

import pytest

from course.errors import CourseError
from course.mystery.bugs import CONDITIONS
from course.mystery.case import OPS
from course.mystery.cases import CASES, POOL, get_case
from tests.mystery.runs import clean_run, planted_run

IDS = [spec.id for spec in POOL]


def test_the_pool_is_large_and_varied():
    assert len(POOL) >= 10
    assert len({spec.bug for spec in POOL}) == len(POOL)
    assert len({spec.bug.family for spec in POOL}) >= 6
    assert len({spec.bug.condition for spec in POOL}) >= 5
    assert len({spec.bug.effect for spec in POOL}) >= 4
    assert len({spec.symptom.description for spec in POOL}) >= 5
    assert all(spec.bug.op in OPS and spec.decoy.op in OPS for spec in POOL)


@pytest.mark.parametrize("case_id", IDS)
def test_the_symptom_shows_on_the_buggy_device_and_not_on_a_healthy_one(case_id):
    spec = CASES[case_id]
    clean = clean_run(spec.scenario)
    assert spec.symptom.shows(planted_run(spec.scenario, spec.bug), clean), spec.symptom
    assert not spec.symptom.shows(clean, clean)


@pytest.mark.parametrize("case_id", IDS)
def test_the_decoy_shows_the_same_symptom_so_a_scenario_copy_cannot_pass(case_id):
    spec = CASES[case_id]
    assert spec.decoy != spec.bug and spec.decoy.op != spec.bug.op
    clean = clean_run(spec.scenario)
    assert spec.symptom.shows(planted_run(spec.scenario, spec.decoy), clean)


# Words that would point at a cause: op names (whole words), and stems of layout words.
OP_WORDS = {op.rstrip("_") for op in OPS} | set(OPS) | set(CONDITIONS) | {"bf16", "qr"}
STEMS = ("channels", "bfloat", "transpos", "offset", "slice", "fused", "contiguous", "stride")
STEMS += ("layout", "orthogonal", "column", "permut")


@pytest.mark.parametrize("case_id", IDS)
def test_the_brief_names_nothing_of_the_cause(case_id):
    spec = CASES[case_id]
    for text in (spec.brief, spec.title):
        words = set(re.findall(r"[a-z0-9_-]+", text.lower()))
        found = sorted(words & OP_WORDS) + [s for s in STEMS if s in text.lower()]
        assert not found, f"{case_id} mentions {found}"


def test_an_unknown_case_id_lists_the_pool():
    with pytest.raises(CourseError, match="case-01"):
        get_case("case-99")
