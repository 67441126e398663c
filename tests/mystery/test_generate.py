"""Cases from seeds: hundreds of distinct cases, unrelated neighbours, and none the auditor's
default sweep closes on its own."""

from __future__ import annotations

import random

from course.audit.args import SHAPES
from course.audit.core import audit
from course.audit.knobs import LARGE
from course.audit.report import flagged_ops
from course.mystery.bugs import planted_backend
from course.mystery.cli import SEED_SPACE, deal
from course.mystery.generate import BANDS, COMPANION, VISIBLE_KINDS, band, generate
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


def test_every_condition_the_default_sweep_meets_alone_is_planted_paired():
    """The kinds the default sweep meets alone come only paired with a companion that none of
    its shapes has (every last dimension a multiple of 4), and each case carries its band."""
    assert all(shape[-1] % 4 == 0 for shape in (*SHAPES.values(), LARGE))
    for seed in range(600):
        spec = generate(seed)
        trigger = spec.bug.trigger
        assert (trigger.also == COMPANION) == (trigger.kind in VISIBLE_KINDS), spec.bug
        assert spec.band == ("pair" if trigger.also else band(trigger.kind))
    assert set(BANDS) == {"knob", "experiment", "pair"}
    assert set(PLANTED_KINDS) == {kind for kinds in BANDS.values() for kind in kinds}


# Cases one default audit of the culprit op can run in about 30 seconds on two quiet cores.
DEALT = 10


def test_one_default_audit_names_the_culprit_of_no_dealt_case():
    """The default sweep (every layout and dtype, and its large output) on each dealt case's
    device, restricted to the culprit op: the other ops run the working kernel, so a full sweep
    flags nothing more. A deal is what a room gets: random seeds, no shared (op, condition)."""
    draws = random.Random(25)
    seeds = deal(DEALT, draw=lambda: draws.randrange(SEED_SPACE))
    named = []
    for seed in seeds:
        bug = generate(seed).bug
        results = audit(backend=planted_backend(bug), ops=[bug.op])
        if f"aten::{bug.op}" in flagged_ops(results):
            named.append((seed, bug.op, bug.trigger.kinds))
    assert named == []
    assert len({generate(seed).band for seed in seeds}) >= 2  # the deal mixes the bands
