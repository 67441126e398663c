"""The repro checker, on one case of every planted condition: the reference repro passes, every
other case's repro fails, and so do repros that do not isolate the op or the condition."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.layout.named import laid_out
from course.mystery.scenarios import compiled
from tests.mystery.runs import PLANTED_KINDS, spec_for, untrained_case

DEVICE = emps.DEVICE


@pytest.fixture(scope="module")
def cases():
    return {kind: untrained_case(spec_for(kind)) for kind in PLANTED_KINDS}


@pytest.mark.parametrize("kind", PLANTED_KINDS)
def test_the_reference_repro_passes(cases, kind):
    verdict = cases[kind].check_repro(spec_for(kind).repro_function())
    assert verdict.passed, (spec_for(kind).repro, verdict)


@pytest.mark.parametrize("kind", PLANTED_KINDS)
def test_every_other_cases_repro_fails(cases, kind):
    mine = spec_for(kind).bug
    for other in PLANTED_KINDS:
        theirs = spec_for(other).bug
        if other != kind and (theirs.op, theirs.trigger.kind) != (mine.op, mine.trigger.kind):
            assert not cases[kind].check_repro(spec_for(other).repro_function()).passed


@pytest.mark.parametrize("kind", PLANTED_KINDS)
def test_constant_answers_fail(cases, kind):
    assert "with the bug removed" in cases[kind].check_repro(lambda: True).message
    assert "on the case's device" in cases[kind].check_repro(lambda: False).message


def _mul_transposed():
    values = torch.randn(6, 8) + 2
    out = laid_out(values, "transposed", DEVICE)
    out.mul_(0.5)
    return not torch.equal(out.cpu(), laid_out(values, "transposed") * 0.5)


def test_a_repro_that_sees_something_wrong_but_not_this_op_fails(cases):
    case = cases["transposed"]
    assert case._spec.bug.op != "mul_"
    mine = case._spec.repro_function()
    verdict = case.check_repro(lambda: mine() or _mul_transposed())
    assert "every other suspect op breaks under the same condition" in verdict.message


def test_a_repro_that_tries_the_op_on_every_layout_fails(cases):
    spec = cases["transposed"]._spec
    elsewhere = spec.repro.replace('"transposed"', '"step-sliced"')
    names = {"laid_out": laid_out, "DEVICE": DEVICE}
    on_gaps = compiled(elsewhere, "the op on a step-sliced output", names)["repro"]
    mine = spec.repro_function()
    verdict = cases["transposed"].check_repro(lambda: mine() or on_gaps())
    assert "the same op breaks under another condition" in verdict.message


def test_a_repro_that_trains_the_scenario_is_refused(cases):
    case = cases["large"]
    verdict = case.check_repro(lambda: case.run_scenario(quiet=True).blew_up)
    assert "trains the scenario" in verdict.message


def test_odd_repros_get_clear_verdicts(cases):
    case = cases["large"]
    assert "without calling it" in case.check_repro(True).message
    assert "return True or False" in case.check_repro(lambda: "yes").message
    assert "raised ZeroDivisionError" in case.check_repro(lambda: 1 / 0).message
    assert "not attempted yet" in case.check_repro(...).message
