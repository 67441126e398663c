"""Cases from seeds: hundreds of distinct cases, unrelated neighbours, and few the auditor's default
sweep closes on its own."""

from __future__ import annotations

import random

import pytest

from course.audit.core import audit
from course.audit.report import flagged_ops
from course.mystery.bugs import planted_backend
from course.mystery.generate import KIND_WEIGHTS, VISIBLE_KINDS, generate
from tests.mystery.runs import PLANTED_KINDS


def test_a_seed_always_generates_the_same_case_and_neighbours_differ():
    assert generate(41) == generate(41)
    generate.cache_clear()
    assert generate(41).key() == generate(41).key()
    assert len({generate(seed).design.source() for seed in range(40, 50)}) == 10


def test_at_least_200_distinct_cases_come_from_the_seeds():
    keys = {generate(seed).key() for seed in range(3000)}
    assert len(keys) >= 200
    assert len({key[0] for key in keys}) == 4  # model families
    assert {key[4] for key in keys} == set(PLANTED_KINDS)  # conditions


def test_two_seeds_almost_never_give_the_same_brief_or_numbers():
    descriptions = [generate(seed).design.description for seed in range(400)]
    assert len(set(descriptions)) >= 396
    assert len({generate(seed).scenario.seed for seed in range(400)}) == 400


def test_the_auditor_can_see_only_a_few_conditions_and_they_are_drawn_rarely():
    visible = sum(KIND_WEIGHTS[kind] for kind in VISIBLE_KINDS)
    assert visible / sum(KIND_WEIGHTS.values()) < 0.2


@pytest.mark.xfail(
    strict=True,
    reason="issue 36 open: the default audit's size sweep (issue 37: 71,680 elements) reaches "
    "the cases' size bounds (2,048-4,096) and long dims, so it names 16 of 40 culprits; the "
    "generated cases must move their conditions past one default audit",
)
def test_the_default_audit_names_the_culprit_in_at_most_a_quarter_of_40_cases():
    """The default sweep (every layout and dtype) on each case's device, restricted to the
    culprit op: the other ops run the working kernel, so a full sweep flags nothing more."""
    seeds = random.Random(25).sample(range(1_000_000), 40)
    named = []
    for seed in seeds:
        bug = generate(seed).bug
        results = audit(backend=planted_backend(bug), ops=[bug.op])
        if f"aten::{bug.op}" in flagged_ops(results):
            named.append(bug.trigger.kind)
    assert len(named) <= 10, named
    assert set(named) <= set(VISIBLE_KINDS), named
