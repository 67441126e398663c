"""Every site of every family: the user's code runs, the planted condition strikes there during
training, and the site's reference fix takes it away (two training steps each)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from course import emps
from course.mystery.bugs import PlantedBug, planted_backend, times_fired
from course.mystery.conditions import Trigger
from course.mystery.effects import ALLOWED
from course.mystery.families import SITES, WEAK, design
from course.mystery.fixes import reference_fix
from course.mystery.scenarios import Scenario, compiled, run

COMBOS = [(site, kind) for site in SITES for kind in site.kinds]


def _one_step(site, kind):
    rng = random.Random(f"{site.family} {site.habit} {kind}")
    op = next(o for o in site.ops if any((o, e) not in WEAK for e in ALLOWED[kind]))
    drawn = dataclasses.replace(design(rng, site, kind, op), steps=2)  # a repeat needs two
    effect = next(e for e in site.effects or ALLOWED[kind] if (op, e) not in WEAK)
    return drawn, PlantedBug((op,), Trigger(kind, drawn.bound), effect)


@pytest.mark.parametrize("site, kind", COMBOS, ids=[f"{s.family}-{s.habit}-{k}" for s, k in COMBOS])
def test_the_condition_strikes_at_its_site_and_the_fix_removes_it(site, kind):
    drawn, bug = _one_step(site, kind)
    scenario = Scenario(drawn, 3)
    buggy = planted_backend(bug)
    with emps.use_backend(buggy):
        run(scenario)
    assert times_fired(buggy) > 0, drawn.source()
    fix = compiled(reference_fix(drawn), "fix", {})["patch"]
    fixed = planted_backend(bug)
    with emps.use_backend(fixed):
        run(scenario, patch=fix)
    assert times_fired(fixed) == 0, reference_fix(drawn)


def test_every_site_says_what_it_strikes_and_names_a_fix():
    for site in SITES:
        drawn, _ = _one_step(site, site.kinds[0])
        assert drawn.hit and "def patch(model):" in reference_fix(drawn)
