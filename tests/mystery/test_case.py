"""open_case and the Case API: seeds, the device context, the culprit checker, edge cases."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.errors import CourseError
from course.exercises import instructor_mode
from course.mystery import LAYOUT_CONDITIONS, OPS, open_case
from course.mystery.case import SCAFFOLD, choose
from course.mystery.cases import CASES, POOL


@pytest.fixture(scope="module")
def case():
    return open_case(5, case_id="case-01")  # lerp_ on transposed outputs


def test_a_seed_always_opens_the_same_case_and_every_case_is_reachable():
    assert open_case(42).id == open_case(42).id == choose(42).id
    assert {choose(seed).id for seed in range(200)} == set(CASES)


def test_without_a_seed_a_random_one_is_chosen_and_kept():
    case = open_case()
    assert 0 <= case.seed < 1_000_000 and open_case(case.seed).id == case.id


@pytest.mark.parametrize("seed", [-1, 2**31, 1.5, "3", True])
def test_bad_seeds_are_refused(seed):
    with pytest.raises(CourseError, match="seed"):
        open_case(seed)


def test_the_case_describes_itself_without_naming_the_cause(case):
    text = case.describe()
    assert case.brief in text and "seed 5" in text and "case.source()" in text
    assert "lerp" not in text and "transpos" not in text
    assert "class OrthoMLP" in case.source() and "Adam(lr=0.01" in case.source()
    assert all(name in case.layouts() for name in LAYOUT_CONDITIONS)


def test_use_device_plants_the_bug_only_inside_the_block(case):
    values = torch.randn(4, 3).T.contiguous().T
    with case.use_device():
        x = values.to(case.device)
        x.lerp_(torch.zeros_like(x), 0.5)
        assert torch.equal(x.cpu(), values)  # the write was lost
    y = values.to(case.device)
    with emps.use_profile("fixed-macos14"):
        y.lerp_(torch.zeros_like(y), 0.5)
    assert torch.equal(y.cpu(), values * 0.5)


def test_model_optimizer_and_step_build_the_scenario(case):
    model = case.model()
    assert model.mid.weight.stride() == (1, 24) and model.mid.weight.device.type == "emps"
    optimizer = case.optimizer(model)
    before = model.mid.weight.detach().cpu().clone()
    loss = case.step(model, optimizer)
    assert loss > 0 and torch.equal(model.mid.weight.detach().cpu(), before)
    cpu = case.model(device="cpu")
    case.step(cpu, case.optimizer(cpu))
    assert not torch.equal(cpu.mid.weight.detach(), before)


def test_run_scenario_prints_progress_and_refuses_other_devices(case, capsys):
    report = case.run_scenario()
    out = capsys.readouterr().out
    assert (
        "training ortho-mlp on emps:0" in out
        and f"step  40/40  loss {report.final_loss:.4g}" in out
    )
    with pytest.raises(CourseError, match="device"):
        case.run_scenario(device="cuda")


def test_hints_come_in_steps(case):
    first, second = case.hint(), case.hint()
    assert first.startswith("Hint 1/") and second.startswith("Hint 2/")
    assert case.hint(4).startswith("Hint 4/")
    with pytest.raises(CourseError):
        case.hint(99)


# --- check_culprit ----------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["lerp_", "lerp", "aten::lerp_.Scalar", "torch.Tensor.lerp_"])
def test_the_right_culprit_passes_however_the_op_is_spelled(case, op):
    assert case.check_culprit(op, "transposed").passed


def test_torchs_channels_last_spelling_names_the_channels_last_condition():
    spec = next(spec for spec in POOL if spec.bug.condition == "channels-last")
    assert open_case(0, case_id=spec.id).check_culprit(spec.bug.op, "channels_last").passed


@pytest.mark.parametrize(
    "op, layout, says",
    [
        ("addcdiv_", "transposed", "the op is not"),
        ("lerp_", "any-non-contiguous", "narrower"),
        ("lerp_", "step-sliced", "the layout condition is not"),
        ("mul_", "channels-last", "neither"),
    ],
)
def test_wrong_culprits_fail_and_say_which_half_is_wrong(case, op, layout, says):
    verdict = case.check_culprit(op, layout)
    assert not verdict.passed and says in verdict.message
    assert "lerp_ on transposed" not in str(verdict)


@pytest.mark.parametrize(
    "op, layout, allowed",
    [("frobnicate_", "transposed", OPS[0]), ("lerp_", "diagonal", LAYOUT_CONDITIONS[0])],
)
def test_unknown_values_are_course_errors_listing_the_choices(case, op, layout, allowed):
    with pytest.raises(CourseError, match=allowed):
        case.check_culprit(op, layout)


def test_every_cases_culprit_is_a_valid_choice():
    for spec in POOL:
        case = open_case(0, case_id=spec.id)
        assert case.check_culprit(spec.bug.op, spec.bug.condition).passed
        assert not case.check_culprit(spec.decoy.op, spec.bug.condition).passed


# --- what a learner copy (nothing attempted) and odd answers get -------------------------------


def _scaffold(*args):
    raise NotImplementedError(SCAFFOLD)


def test_blank_answers_are_not_attempted_yet(case):
    assert "not attempted yet" in case.check_culprit(..., ...).message
    assert "not attempted yet" in case.check_repro(...).message
    assert "not attempted yet" in case.check_fix(...).message
    assert "not attempted yet" in case.check_repro(_scaffold).message
    assert "not attempted yet" in case.check_fix(_scaffold).message


def test_odd_repros_get_clear_verdicts(case):
    assert "without calling it" in case.check_repro(True).message
    assert "return True or False" in case.check_repro(lambda: "yes").message
    assert "raised ZeroDivisionError" in case.check_repro(lambda: 1 / 0).message


def test_a_repro_may_return_a_bool_tensor_and_use_the_case_device(case):
    def repro():
        with case.use_device():  # inside a check this is the device under test
            x = torch.ones(4, 3).T.contiguous().T.to(case.device)
            x.lerp_(torch.zeros_like(x), 0.5)
            return (x.cpu() != 0.5).any()

    assert case.check_repro(repro).passed


def test_odd_patches_get_clear_verdicts(case):
    assert "without calling it" in case.check_fix(3).message
    assert "return the model" in case.check_fix(lambda m: None).message
    assert "moved parameters" in case.check_fix(lambda m: m.to("cpu")).message
    assert "parameters (names or shapes)" in case.check_fix(lambda m: torch.nn.Linear(2, 2)).message
    assert "raised KeyError" in case.check_fix(lambda m: {}["x"]).message


# --- instructor mode ---------------------------------------------------------------------------


def test_answer_is_for_instructors_only(case):
    instructor_mode(False)
    with pytest.raises(CourseError, match="instructor"):
        case.answer()
    instructor_mode(True)
    try:
        answer = case.answer()
    finally:
        instructor_mode(False)
    assert (answer.op, answer.layout) == ("lerp_", "transposed")
    assert answer.repro is CASES["case-01"].repro and answer.fix is CASES["case-01"].fix
    assert "def lerp_on_transposed" in str(answer) and "def contiguous_middle" in str(answer)
