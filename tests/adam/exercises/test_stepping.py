"""03.adam_step: bitwise like torch means torch's own ops, and every wrong answer is told why."""

from __future__ import annotations

import math

import pytest
import torch

from course.adam.exercises import stepping
from course.exercises import check
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "03.adam_step": (
        "bias corrections are missing",
        "sqrt is missing",
        "preserve_format",
        "eps is inside the square root",
        "bound to the local name `param`",
        "betas (0.9, 0.999) give, not the betas you were given (0.5, 0.99)",
        "addcdiv_(exp_avg, denom",  # m_hat / v_hat first, then param -= ...
        "exp_avg.lerp_(grad, 1 - beta1)",  # the markdown's formula with mul_ and add_
        "addcmul_(grad, grad, value=1 - beta2)",  # (1 - beta2) * grad * grad with add_
        "is a new tensor",  # state['exp_avg'] = torch.lerp(...)
        "(yours holds 't')",  # the step count under another key
        "ignored lr (= 0.02 here)",
        "ignored eps (= 0.001 here)",
        "Count steps from 1",  # t read before it is incremented
        "course.adam.scratch.adam_step, the course's own Adam",
        "torch's own Adam",
        "new memory",  # param.data = ...
        "the gradient you were given has changed",
        "did not change on this step",  # the step tried on the first call only
        "eps added before the division",
        "wrote the parameter with sub_",  # torch's bits on the CPU, not torch's op
        "wrote state['exp_avg'] with copy_",  # exp_avg.copy_(torch.lerp(...))
        "is a copy",  # param.reshape(-1).addcdiv_ on a transposed parameter
        "holds its own square root",  # exp_avg_sq.sqrt_()
        "the numerator is grad",
        "wrote the parameter with copy_",  # .contiguous(), addcdiv_, copy_ back
        "wrote the parameter with copy_",  # computed in float64, copied back
        "follows the gradient's layout",  # torch.zeros_like(grad)
        "stay at their first step's",  # 1 - beta**1 on every step
        "on this first step, what it starts from",  # torch.ones_like(param)
        "decays after the new term is added",  # addcmul_, then mul_(beta2)
        "the square root of the correction",  # sqrt(v) / (1 - beta2**t)
        "after step 1 on a contiguous parameter your numbers are torch's to the bit",  # sub_
        "wrote state['exp_avg'] with add_, where torch's step runs exp_avg.lerp_(grad, 1 - beta1), on the first step too",  # noqa: E501
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_a_last_bit_difference_shows_every_digit():
    """Six digits printed yours and torch's alike; the learner must see where they differ."""
    verdict = check("03.adam_step", stepping._flawed_step("mul_ and add_"))
    assert verdict.yours != verdict.expected
    assert verdict.yours.split("=")[0] == verdict.expected.split("=")[0]  # the same element


def _counting_in_a_tensor(item: bool):
    """torch's own state['step'], a float32 tensor, read as a number (`item`) or used as is."""

    def my_step(param, grad, state, lr, betas, eps):
        beta1, beta2 = betas
        if not state:
            state["step"] = torch.tensor(0.0)
            state["exp_avg"] = torch.zeros_like(param)
            state["exp_avg_sq"] = torch.zeros_like(param)
        state["step"] += 1
        t = state["step"].item() if item else state["step"]
        state["exp_avg"].lerp_(grad, 1 - beta1)
        state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = (state["exp_avg_sq"].sqrt() / (1 - beta2**t) ** 0.5).add_(eps)
        param.data.addcdiv_(state["exp_avg"], denom, value=-lr / (1 - beta1**t))

    return my_step


def test_the_step_written_as_the_prompt_asks_passes_in_its_natural_spellings():
    assert check("03.adam_step", stepping._flawed_step("")).passed  # zeros_like preserves
    assert check("03.adam_step", _counting_in_a_tensor(item=True)).passed


def test_a_count_kept_as_a_tensor_is_named_when_it_rounds_the_corrections():
    verdict = check("03.adam_step", _counting_in_a_tensor(item=False))
    assert not verdict.passed and "step.item()" in verdict.message


def test_a_non_function_is_refused():
    verdict = check("03.adam_step", 0.5)
    assert not verdict.passed and "function" in verdict.message


def test_every_hidden_problem_passes_the_reference_and_varies_a_named_parameter():
    problems = stepping.PROBLEMS
    for problem in problems:
        assert stepping.run_problem(stepping._reference_step(), problem) is None
    assert len({p.lr for p in problems}) >= 3 and len({p.eps for p in problems}) >= 3
    assert len({p.betas for p in problems}) >= 3 and len({len(p.shape) for p in problems}) == 3
    assert {"contiguous", "transposed", "step-sliced", "permuted"} <= {p.layout for p in problems}
    assert any(p.grad_layout and p.grad_layout != p.layout for p in problems)


def test_eps_placement_matters_on_the_zero_gradient_problem():
    """Exact zeros and eps = 1e-3 make eps inside the sqrt wrong by far more than rounding."""
    verdict = stepping.run_problem(
        stepping._flawed_step("eps inside the sqrt"), stepping.PROBLEMS[3]
    )
    assert verdict is not None and "eps is inside the square root" in verdict.message


def test_an_error_names_the_problem_it_happened_on():
    reference = stepping._reference_step()

    def two_d_only(param, grad, state, lr, betas, eps):
        rows, cols = param.shape  # a learner's step written for weight matrices
        reference(param, grad, state, lr, betas, eps)

    verdict = check("03.adam_step", two_d_only)
    assert "of a bias (1-D)" in verdict.message and "raised ValueError" in verdict.message


def _spelled(how: str):
    """torch's ops written another way: out= or foreach. Still torch's ops, still its step."""

    def my_step(param, grad, state, lr, betas, eps):
        beta1, beta2 = betas
        if not state:
            state.update(
                step=0, exp_avg=torch.zeros_like(param), exp_avg_sq=torch.zeros_like(param)
            )
        state["step"] += 1
        t = state["step"]
        m, v = state["exp_avg"], state["exp_avg_sq"]
        if how == "out=":
            torch.lerp(m, grad, 1 - beta1, out=m)
        else:
            torch._foreach_lerp_([m], [grad], 1 - beta1)
        v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = (v.sqrt() / (1 - beta2**t) ** 0.5).add_(eps)
        if how == "out=":
            torch.addcdiv(param, m, denom, value=-lr / (1 - beta1**t), out=param)
        else:
            torch._foreach_addcdiv_([param], [m], [denom], -lr / (1 - beta1**t))

    return my_step


@pytest.mark.parametrize("how", ["out=", "foreach"])
def test_torch_ops_in_their_out_and_foreach_spellings_pass(how):
    assert check("03.adam_step", _spelled(how)).passed


def _written_another_way(how: str):
    """A right step as a learner who understood it may write it: the state made by zeroing
    empty tensors, math.sqrt, a step_size, eps added out of place, unbound Tensor methods, the
    two means in the other order."""

    def my_step(param, grad, state, lr, betas, eps):
        beta1, beta2 = betas
        if "step" not in state:
            made = [torch.empty_like(param) for _ in range(2)]
            made[0].zero_() if how == "zero_" else made[0].fill_(0.0)
            made[1].fill_(0.0)
            state.update(step=0, exp_avg=made[0], exp_avg_sq=made[1])
        state["step"] += 1
        t = state["step"]
        torch.Tensor.addcmul_(state["exp_avg_sq"].mul_(beta2), grad, grad, value=1 - beta2)
        torch.Tensor.lerp_(state["exp_avg"], grad, weight=1 - beta1)
        denom = state["exp_avg_sq"].sqrt() / math.sqrt(1 - beta2**t) + eps
        step_size = lr / (1 - beta1**t)
        param.addcdiv_(state["exp_avg"], denom, value=-step_size)

    return my_step


@pytest.mark.parametrize("how", ["zero_", "fill_"])
def test_a_right_step_written_another_way_passes(how):
    assert check("03.adam_step", _written_another_way(how)).passed
