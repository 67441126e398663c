"""The repro checker, on one case of every planted condition: the reference repro passes, every
other case's repro fails, and so do repros that do not isolate the op or the condition."""

from __future__ import annotations

import pytest
import torch

import course.mystery.case as case_module
from course import emps, journal
from course.layout.named import laid_out
from course.mystery.bugs import times_fired
from course.mystery.scenarios import compiled
from tests.mystery.runs import PLANTED_KINDS, spec_for, untrained_case

DEVICE = emps.DEVICE


@pytest.fixture(autouse=True)
def untiring(tmp_path, monkeypatch):
    """A private journal, and no limit on failing repros (test_case tests the limit)."""
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(case_module, "REPRO_TRIES", 10**6)


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
    """mul_ on the transposed case's own condition: a transposed output of 30 columns."""
    values = torch.randn(6, 30) + 2
    out = laid_out(values, "transposed", DEVICE)
    out.mul_(0.5)
    return not torch.equal(out.cpu(), laid_out(values, "transposed") * 0.5)


def test_a_repro_that_sees_something_wrong_but_not_this_op_fails(cases):
    case = cases["transposed"]
    assert case._spec.bug.op != "mul_"
    mine = case._spec.repro_function()
    verdict = case.check_repro(lambda: mine() or _mul_transposed())
    assert not verdict.passed and verdict.message.startswith("on a control device")
    _names_neither_half(verdict.message, case)


def test_a_repro_that_tries_the_op_on_every_layout_fails(cases):
    spec = cases["transposed"]._spec
    elsewhere = spec.repro.replace('"transposed"', '"step-sliced"')
    names = {"laid_out": laid_out, "DEVICE": DEVICE}
    on_gaps = compiled(elsewhere, "the op on a step-sliced output", names)["repro"]
    mine = spec.repro_function()
    verdict = cases["transposed"].check_repro(lambda: mine() or on_gaps())
    assert not verdict.passed and verdict.message.startswith("on a control device")
    _names_neither_half(verdict.message, cases["transposed"])


def _names_neither_half(message: str, case) -> None:
    """The feedback of a control device names neither the op nor the condition (issue 36)."""
    bug = case._spec.bug
    assert bug.op.rstrip("_") not in message and bug.trigger.describe() not in message
    assert "same condition" not in message and "this op breaks" not in message


def test_the_decoy_and_a_sibling_give_the_same_words(cases):
    spec = cases["transposed"]._spec
    names = {"laid_out": laid_out, "DEVICE": DEVICE}
    on_gaps = compiled(spec.repro.replace('"transposed"', '"step-sliced"'), "gaps", names)["repro"]
    mine = spec.repro_function()
    other_op = cases["transposed"].check_repro(lambda: mine() or _mul_transposed()).message
    other_condition = cases["transposed"].check_repro(lambda: mine() or on_gaps()).message
    assert other_op == other_condition


def test_a_repro_that_trains_the_scenario_is_refused(cases):
    case = cases["large"]
    verdict = case.check_repro(lambda: case.run_scenario(quiet=True).blew_up)
    assert "trains the scenario" in verdict.message


def test_odd_repros_get_clear_verdicts(cases):
    case = cases["large"]
    assert "without calling it" in case.check_repro(True).message
    assert "return True or False" in case.check_repro(lambda: "yes").message
    assert "raised ZeroDivisionError" in case.check_repro(lambda: 1 / 0).message
    mine = case._spec.repro_function()

    def asserts():
        assert not mine(), "the device differs"
        return False

    said = case.check_repro(asserts).message
    assert "raised AssertionError" in said and "returns its answer instead of asserting" in said
    assert "not attempted yet" in case.check_repro(...).message


def _copies_the_models_call():
    """The causal mask as the model applies it: one row broadcast over the scores, and -5."""
    values = torch.randn(6, 8) + 2
    mask = torch.rand(8) < 0.5
    expected = values.clone().masked_fill_(mask, -5.0)
    out = values.to(DEVICE)
    out.masked_fill_(mask.to(DEVICE), -5.0)
    return not torch.equal(out.cpu(), expected)


def test_a_repro_that_copies_the_models_call_meets_the_sites_other_condition_and_fails(cases):
    case = cases["negative-scalar"]
    assert (case._spec.design.habit, case._spec.bug.op) == ("causal-mask", "masked_fill_")
    verdict = case.check_repro(_copies_the_models_call)
    assert verdict.message.startswith("on a control device")
    assert "nothing else unusual" in verdict.message


def test_a_repro_that_sweeps_the_op_over_sizes_and_dtypes_fails(cases):
    spec = cases["tiny-scalar"]._spec
    names = {"laid_out": laid_out, "DEVICE": DEVICE}
    mine = spec.repro_function()
    huge = compiled(spec.repro.replace("(6, 8)", "(200, 100)"), "a huge output", names)["repro"]
    half = spec.repro.replace("torch.zeros(6, 8)", "torch.zeros(6, 8, dtype=torch.bfloat16)")
    in_bf16 = compiled(half, "a bfloat16 output", names)["repro"]
    for sweep in (huge, in_bf16):
        verdict = cases["tiny-scalar"].check_repro(lambda s=sweep: mine() or s())
        assert verdict.message.startswith("on a control device"), verdict.message


def _kernel():
    return getattr(emps.current_backend().overrides, "kernel", None)


def test_a_repro_that_reads_the_device_instead_of_a_result_fails(cases):
    case = cases["large"]
    planted = case.backend.overrides.kernel._bugs  # what a learner finds with dir()

    def sniff():
        return getattr(_kernel(), "_bugs", ()) == planted

    def sharper_sniff():  # tells the bug-removed device apart too: only a struck bug is left
        return sniff() and not _kernel()._harmless

    verdict = case.check_repro(sniff)
    assert not verdict.passed and "reads the device or the case" in verdict.message
    verdict = case.check_repro(sharper_sniff)
    assert not verdict.passed and "the planted bug never struck" in verdict.message


@pytest.mark.parametrize("kind", ["tiny-scalar", "broadcast-input", "aliased-input"])
def test_a_repro_that_trains_the_users_model_by_hand_is_refused(cases, kind):
    """Where no other op meets the condition in training, the decoy device cannot catch it."""
    case = cases[kind]
    scenario = case._spec.scenario
    model, data = scenario.setup(DEVICE)  # built before the check, outside the repro
    reference = scenario.setup("cpu")[0]

    def by_hand():
        for net in (model, reference):
            device = next(net.parameters()).device
            optimizer = net.configure_optimizer()
            for _ in range(3):
                optimizer.zero_grad()
                scenario.loss(net, data.x.to(device), data.y.to(device)).backward()
                optimizer.step()
        pairs = zip(model.parameters(), reference.parameters(), strict=True)
        return any(not torch.equal(a.detach().cpu(), b.detach()) for a, b in pairs)

    verdict = case.check_repro(by_hand)
    assert not verdict.passed and "runs the user's model" in verdict.message


def test_a_repro_that_runs_the_model_and_swallows_the_refusal_is_refused(cases):
    case = cases["tiny-scalar"]

    def swallowed():
        model = case.model()  # building it is allowed: a repro may borrow a weight
        try:
            model(case._spec.scenario.data().x.to(DEVICE))
        except Exception:
            return True
        return False

    assert "runs the user's model" in case.check_repro(swallowed).message


def _one_adam_step():
    """Adam on one random tensor, device against CPU: six kernels, not one op."""
    values, grad = torch.randn(6, 8) + 2, torch.randn(6, 8)
    results = []
    for device in ("cpu", DEVICE):
        weight = torch.nn.Parameter(values.to(device))
        weight.grad = grad.to(device)
        torch.optim.Adam([weight], lr=0.01).step()
        results.append(weight.detach().cpu())
    return not torch.equal(*results)


def test_a_repro_that_steps_an_optimizer_is_refused(cases):
    """On the tiny-scalar case only add_(eps) meets the condition in Adam, so no decoy fires."""
    verdict = cases["tiny-scalar"].check_repro(_one_adam_step)
    assert not verdict.passed and "steps an optimizer" in verdict.message


def test_a_repro_that_reads_whether_the_bug_struck_instead_of_a_result_fails(cases):
    """The kernel's own counter (bugs.times_fired) is an oracle no real device has."""
    case = cases["broadcast-input"]
    mine = case._spec.repro_function()

    def oracle():
        before = times_fired(emps.current_backend())
        mine()
        return times_fired(emps.current_backend()) > before

    verdict = case.check_repro(oracle)
    assert not verdict.passed and "with the bug removed" in verdict.message
    assert "reads the device or the case instead of a result" in verdict.message


# --- right repros written another way: each must pass ---------------------------------------


def _inputs(rows: int = 5, cols: int = 7) -> tuple[torch.Tensor, ...]:
    """A weight (cols, rows) to transpose, and addcdiv_'s operands of its transposed shape."""
    return torch.randn(cols, rows), torch.randn(rows, cols), torch.rand(rows, cols) + 0.5


def _numpy_any():
    """Compared as arrays: `.any()` on an array returns a NumPy bool."""
    w, t1, t2 = _inputs()
    out = w.to(DEVICE).T
    out.addcdiv_(t1.to(DEVICE), t2.to(DEVICE), value=-0.25)
    return (out.cpu().numpy() != w.T.addcdiv(t1, t2, value=-0.25).numpy()).any()


def _compared_on_the_device():
    """Made on the device, compared there with a zero maximum difference."""
    w = torch.randn(7, 5, device=DEVICE)
    t1, t2 = torch.randn(5, 7, device=DEVICE), torch.rand(5, 7, device=DEVICE) + 0.5
    expected = w.cpu().T.addcdiv(t1.cpu(), t2.cpu())
    out = w.T
    out.addcdiv_(t1, t2)
    return bool((out - expected.to(DEVICE)).abs().max() != 0)


def _out_form_with_a_helper():
    """The op's out= form into a transposed buffer, through a helper run on both devices."""

    def addcdiv_into_transposed(device, w, t1, t2):
        out = torch.empty(w.shape[::-1], device=device).T
        torch.addcdiv(w.to(device), t1.to(device), t2.to(device), value=2.0, out=out)
        return out.cpu()

    _, t1, t2 = _inputs()
    w = torch.randn(5, 7)
    return not torch.equal(
        addcdiv_into_transposed(DEVICE, w, t1, t2), addcdiv_into_transposed("cpu", w, t1, t2)
    )


def _with_a_control(case):
    """True only if the transposed output breaks and the row-by-row one does not, run through
    case.backend as a learner who knows emps.use_backend would."""

    def broken(transposed):
        w, t1, t2 = _inputs(6, 6)
        out = w.to(DEVICE).T if transposed else w.to(DEVICE)
        expected = (w.T if transposed else w).addcdiv(t1, t2, value=0.5)
        out.addcdiv_(t1.to(DEVICE), t2.to(DEVICE), value=0.5)
        return not torch.equal(out.cpu(), expected)

    with emps.use_backend(case.backend):
        return broken(True) and not broken(False)


@pytest.mark.parametrize(
    "repro", [_numpy_any, _compared_on_the_device, _out_form_with_a_helper, _with_a_control]
)
def test_right_repros_written_another_way_pass(cases, repro):
    case = cases["transposed"]
    assert (case._spec.bug.op, case._spec.design.habit) == ("addcdiv_", "import")
    own = case.backend
    mine = (lambda: repro(case)) if repro is _with_a_control else repro
    verdict = case.check_repro(mine)
    assert verdict.passed, verdict
    assert case.backend is own  # the device under test was case.backend only while judged
