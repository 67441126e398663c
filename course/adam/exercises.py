"""Notebook 03's exercises: Adam from scratch checked bitwise against torch, and the switchboard."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from course.adam.scratch import STATE_KEYS, State, bias_corrections, sample_problem
from course.adam.switchboard import CASES, outcomes
from course.exercises import Exercise, failed, passed, register

# ---- exercises -------------------------------------------------------------------------------

_CHECK_STEPS = 4
_LR = 1e-2
# Classic slips, as the update each would produce from the (correct) moments m and v.
_MISTAKES = {
    "the bias corrections are missing": lambda m, v, c1, c2: -_LR * m / (v.sqrt() + 1e-8),
    "only 1 - beta1**t is applied; also divide sqrt(v) by sqrt(1 - beta2**t)": (
        lambda m, v, c1, c2: -_LR / c1 * m / (v.sqrt() + 1e-8)
    ),
    "only 1 - beta2**t is applied; also divide lr by 1 - beta1**t": (
        lambda m, v, c1, c2: -_LR * m / ((v / c2).sqrt() + 1e-8)
    ),
    "the sqrt is missing: divide by sqrt(v) / sqrt(1 - beta2**t) + eps": (
        lambda m, v, c1, c2: -_LR / c1 * m / (v / c2**0.5 + 1e-8)
    ),
    "the sqrt is missing: divide by sqrt(v_hat) + eps, not v_hat + eps": (
        lambda m, v, c1, c2: -_LR / c1 * m / (v / c2 + 1e-8)
    ),
    "the sign is flipped: Adam steps against m (value=-lr / (1 - beta1**t))": (
        lambda m, v, c1, c2: _LR / c1 * m / ((v / c2).sqrt() + 1e-8)
    ),
}


def _diagnose(update: torch.Tensor, state: State, step: int) -> str:
    """Name the classic slip whose update matches the learner's, if one does."""
    c1, c2 = bias_corrections(0.9, 0.999, step)
    m, v = state["exp_avg"], state["exp_avg_sq"]
    for mistake, formula in _MISTAKES.items():
        if torch.allclose(update, formula(m, v, c1, c2), rtol=1e-4, atol=1e-8):
            return f"\n  your update matches a known slip: {mistake}"
    return ""


def _check_adam_step(answer: Callable[..., None]) -> Any:
    """Run the learner's step beside torch.optim.Adam on a contiguous and a transposed param."""
    if not callable(answer):
        return failed(
            "pass your step *function* (def my_step(param, grad, state, lr, betas, eps)),"
            " not its result",
            type(answer).__name__,
            "a function",
        )
    for transposed in (False, True):
        layout = "transposed (non-contiguous)" if transposed else "contiguous"
        start, loss_fn = sample_problem(seed=1, transposed=transposed)
        ours, theirs = start.clone().requires_grad_(), torch.nn.Parameter(start.clone())
        opt, state = torch.optim.Adam([theirs], lr=_LR), {}
        for step in range(1, _CHECK_STEPS + 1):
            for p in (ours, theirs):
                p.grad = None
                loss_fn(p).backward()
            before = ours.detach().clone()
            with torch.no_grad():
                answer(ours, ours.grad, state, lr=_LR, betas=(0.9, 0.999), eps=1e-8)
            opt.step()
            verdict = _compare_step(ours, theirs, state, opt.state[theirs], step, layout)
            if verdict is not None and "moments match" in verdict.message:
                verdict.message += _diagnose(ours.detach() - before, state, step)
            if verdict is not None:
                return verdict
    return passed(
        f"your step matches torch.optim.Adam for {_CHECK_STEPS} steps, on a contiguous "
        "and on a transposed parameter, state layout included"
    )


def _compare_step(ours, theirs, state, expected_state, step, layout):
    for key in STATE_KEYS:
        if key not in state:
            return failed(
                f"after step {step}, state has no {key!r}: keep Adam's running means "
                "in state['exp_avg'] and state['exp_avg_sq']",
                sorted(state),
                list(STATE_KEYS),
            )
        mine, want = state[key], expected_state[key]
        if mine.stride() != want.stride():
            return failed(
                f"{layout} parameter: your state[{key!r}] has stride {mine.stride()}, "
                f"torch's has the parameter's stride {want.stride()}; create it with "
                "torch.zeros_like(param, memory_format=torch.preserve_format)",
                mine.stride(),
                want.stride(),
            )
        if not torch.allclose(mine, want, rtol=1e-5, atol=1e-7):
            return failed(
                f"after step {step} on a {layout} parameter, state[{key!r}] differs "
                f"(max diff {(mine - want).abs().max().item():.3g})",
                _short(mine),
                _short(want),
            )
    mine, want = ours.detach(), theirs.detach()
    if not torch.allclose(mine, want, rtol=1e-5, atol=1e-7):
        return failed(
            f"after step {step} on a {layout} parameter the moments match but the "
            f"parameter differs (max diff {(mine - want).abs().max().item():.3g}): check "
            "the bias corrections 1 - beta**step, the sqrt in the denominator, eps and "
            "the sign",
            _short(mine),
            _short(want),
        )
    return None


def _short(t: torch.Tensor) -> str:
    return str([round(v, 6) for v in t.flatten()[:4].tolist()]) + " ..."


def _reference_step():
    def my_step(param, grad, state, lr, betas, eps):
        beta1, beta2 = betas
        if not state:
            state["step"] = 0
            state["exp_avg"] = torch.zeros_like(param, memory_format=torch.preserve_format)
            state["exp_avg_sq"] = torch.zeros_like(param, memory_format=torch.preserve_format)
        state["step"] += 1
        t = state["step"]
        state["exp_avg"].lerp_(grad, 1 - beta1)
        state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = (state["exp_avg_sq"].sqrt() / (1 - beta2**t) ** 0.5).add_(eps)
        param.addcdiv_(state["exp_avg"], denom, value=-lr / (1 - beta1**t))

    return my_step


def _flawed_step(flaw: str):
    """A plausible wrong answer: Adam with one classic mistake (`flaw`)."""

    def my_step(param, grad, state, lr, betas, eps):
        beta1, beta2 = betas
        if not state:
            state["step"] = 0
            for key in STATE_KEYS:  # torch.zeros(shape) is always contiguous
                contiguous = flaw == "contiguous state"
                state[key] = torch.zeros(param.shape) if contiguous else torch.zeros_like(param)
        state["step"] += 1
        c1, c2 = bias_corrections(beta1, beta2, state["step"])
        if flaw == "no bias correction":
            c1 = c2 = 1.0
        state["exp_avg"].lerp_(grad, 1 - beta1)
        state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        root = state["exp_avg_sq"] if flaw == "no sqrt" else state["exp_avg_sq"].sqrt()
        param.addcdiv_(state["exp_avg"], (root / c2**0.5).add_(eps), value=-lr / c1)

    return my_step


register(
    Exercise(
        name="03.adam_step",
        prompt="Write my_step(param, grad, state, lr, betas, eps): one Adam step, in place, "
        "keeping state['exp_avg'] and state['exp_avg_sq'] as torch does.",
        checker=_check_adam_step,
        hint="Five in-place ops: exp_avg.lerp_(grad, 1-beta1); "
        "exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1-beta2); "
        "denom = sqrt(exp_avg_sq) / sqrt(1-beta2**t) + eps; "
        "param.addcdiv_(exp_avg, denom, value=-lr/(1-beta1**t)). Create the state with "
        "zeros_like(param, memory_format=torch.preserve_format) and count steps from 1.",
        reference=_reference_step,
        wrong_answers=(
            lambda: _flawed_step("no bias correction"),
            lambda: _flawed_step("no sqrt"),
            lambda: _flawed_step("contiguous state"),
        ),
    )
)


def _check_explodes(answer: object) -> Any:
    """The learner names the switchboard case that explodes; the measured outcomes decide."""
    labels = [case.label for case in CASES]
    if answer not in labels:
        return failed(
            f"answer with one of the case labels: {', '.join(map(repr, labels))}",
            repr(answer),
            " or ".join(map(repr, labels)),
        )
    results = {o.case.label: o for o in outcomes()}
    exploding = [label for label, o in results.items() if o.verdict == "explodes"]
    chosen = results[answer]
    if answer in exploding:
        return passed(f"{answer!r} explodes: {chosen.case.why}")
    return failed(f"{answer!r} {chosen.verdict}: {chosen.case.why}", answer, " or ".join(exploding))


def _reference_explodes():
    # addcmul_ broken: exp_avg_sq stays 0, so the step is lr * m / (0 + eps): huge.
    # addcdiv_ works, so that huge step lands on the encoder.
    return "addcmul_ only"


register(
    Exercise(
        name="03.predict_explodes",
        prompt="Of the four switchboard cases, which one makes the encoder's update explode?",
        checker=_check_explodes,
        hint="An explosion needs a huge update that actually lands: which op keeps exp_avg_sq at 0 "
        "(so the denominator is just eps), and which op would have to keep working to apply it?",
        reference=_reference_explodes,
        wrong_answers=(
            lambda: "both",
            lambda: "addcdiv_ only",
            lambda: "no bug",
            lambda: "addcmul",
        ),
    )
)
