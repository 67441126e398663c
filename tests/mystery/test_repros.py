"""The repro checker: each reference repro passes its own case and fails every other case.

Wrong answers it must reject, for every case: a constant answer, any other case's repro, a repro
that detects "something is wrong" (this bug or its decoy), the right op on the wrong layout, and
a copy of the scenario.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from course.mystery import repros
from course.mystery.bugs import PlantedBug
from course.mystery.case import open_case
from course.mystery.cases import CASES, POOL
from course.mystery.scenarios import SEED

IDS = [spec.id for spec in POOL]
OP_CALLS = {
    "lerp": repros.lerp,
    "addcdiv": repros.addcdiv,
    "addcmul": lambda out: out.addcmul_(torch.full_like(out, 0.3), out, value=0.1),
    "add": repros.add_scalar,
    "relu": repros.relu,
    "masked_fill": repros.masked_fill,
    "mul": repros.mul,
}
LAYOUTS = {
    "transposed": ("transposed", (6, 4), torch.float32),
    "channels-last": ("channels-last", (2, 3, 4, 5), torch.float32),
    "storage-offset": ("storage-offset", (4, 6), torch.float32),
    "bfloat16": ("contiguous", (6, 4), torch.bfloat16),
    "permuted": ("permuted", (3, 4, 5), torch.float32),
}
WRONG_LAYOUT = {
    "transposed": "permuted",
    "channels-last": "transposed",
    "storage-offset": "transposed",
    "bfloat16": "transposed",
    "permuted": "channels-last",
}


def repro_for(bug: PlantedBug):
    """A repro of a planted bug: its op on its layout, against the CPU."""
    layout, shape, dtype = LAYOUTS[bug.condition]
    shift = 0.0 if bug.family == "relu" else 2.0
    return lambda: repros.differs(OP_CALLS[bug.family], layout, shape, dtype, shift)


@pytest.fixture(scope="module")
def cases():
    return {case_id: open_case(SEED, case_id=case_id) for case_id in IDS}


@pytest.mark.parametrize("case_id", IDS)
def test_the_reference_repro_passes(cases, case_id):
    verdict = cases[case_id].check_repro(CASES[case_id].repro)
    assert verdict.passed, verdict


@pytest.mark.parametrize("case_id", IDS)
def test_every_other_cases_repro_fails(cases, case_id):
    for other in POOL:
        if other.id != case_id:
            assert not cases[case_id].check_repro(other.repro, seed=0).passed, other.id


@pytest.mark.parametrize("case_id", IDS)
def test_constant_answers_fail(cases, case_id):
    case = cases[case_id]
    assert "with the bug removed" in case.check_repro(lambda: True).message
    assert "on the case's device" in case.check_repro(lambda: False).message


@pytest.mark.parametrize("case_id", IDS)
def test_a_repro_that_only_sees_something_wrong_fails(cases, case_id):
    spec = CASES[case_id]
    mine, decoys = repro_for(spec.bug), repro_for(spec.decoy)
    assert cases[case_id].check_repro(mine, seed=0).passed
    verdict = cases[case_id].check_repro(lambda: mine() or decoys(), seed=0)
    assert "different planted bug" in verdict.message, verdict


@pytest.mark.parametrize("case_id", IDS)
def test_the_right_op_on_the_wrong_layout_fails(cases, case_id):
    spec = CASES[case_id]
    elsewhere = dataclasses.replace(spec.bug, condition=WRONG_LAYOUT[spec.bug.condition])
    verdict = cases[case_id].check_repro(repro_for(elsewhere), seed=0)
    assert "on the case's device" in verdict.message


def test_a_scenario_copy_fails(cases):
    case = cases["case-01"]
    verdict = case.check_repro(lambda: "mid.weight" in case.run_scenario(quiet=True).frozen())
    assert "different planted bug" in verdict.message


def test_the_learners_global_rng_is_left_alone(cases):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    cases["case-01"].check_repro(lambda: bool(torch.rand(1) > 2))
    assert torch.equal(torch.rand(3), expected)


def test_each_run_gets_fresh_random_numbers(cases):
    seen: list[float] = []
    for _ in range(2):  # True on the healthy device too: each check stops after two runs
        cases["case-01"].check_repro(lambda: seen.append(torch.rand(1).item()) is None)
    assert len(set(seen)) == len(seen) == 4
