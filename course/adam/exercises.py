"""Notebook 03's exercises and prediction: Adam by hand, op isolation, and the explosion.

`03.adam_step` runs the learner's step beside torch.optim.Adam on hidden problems (contiguous
and transposed parameters, gradients with exact zeros and tiny values, other hyperparameters)
and demands bitwise equality, the standard the story's "frozen" set. `03.isolate_op` runs the
learner's op-isolation experiment under profiles and layouts they never see, so an answer from
the story's table instead of from the device fails where a later profile fixed the op.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import torch

from course import emps
from course.adam.op_isolation import OP_CALLS, OPS
from course.adam.scratch import STATE_KEYS, State, bias_corrections
from course.adam.switchboard import CASES, outcomes
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    passed,
    register,
    register_prediction,
)
from course.layout.named import laid_out

# ---- 03.adam_step ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """A hidden Adam problem: a parameter, a gradient per step, and the hyperparameters."""

    what: str
    shape: tuple[int, int]
    layout: str
    seed: int
    lr: float = 1e-2
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    steps: int = 4
    zeros: bool = False  # exact zeros and tiny values in the gradients

    def start(self) -> torch.Tensor:
        """The parameter's initial values, stored in the problem's layout."""
        gen = torch.Generator().manual_seed(self.seed)
        return laid_out(torch.randn(self.shape, generator=gen), self.layout)

    def grads(self) -> list[torch.Tensor]:
        """One gradient per step (the same for both optimizers)."""
        gen = torch.Generator().manual_seed(self.seed + 1000)
        out = []
        for step in range(self.steps):
            grad = torch.randn(self.shape, generator=gen)
            if self.zeros:
                grad[0] = 0.0  # a row that never gets a gradient (a feature TopK never picks)
                grad[1] *= 1e-6  # tiny gradients: here eps is not negligible
                if step:
                    grad[2] = 0.0  # a gradient once, then none: a decaying second moment
            out.append(laid_out(grad, self.layout))
        return out


PROBLEMS = (
    Problem("a contiguous parameter", (6, 4), "contiguous", seed=1),
    Problem("a transposed (non-contiguous) parameter", (6, 4), "transposed", seed=2),
    Problem("gradients with exact zeros and tiny values", (5, 3), "transposed", seed=3, zeros=True),
    Problem(
        "lr 0.1, betas (0.5, 0.99), eps 1e-3",
        (4, 7),
        "contiguous",
        seed=4,
        lr=0.1,
        betas=(0.5, 0.99),
        eps=1e-3,
        zeros=True,
    ),
    Problem("a step-sliced parameter, 6 steps", (3, 5), "step-sliced", seed=5, steps=6),
)

# Classic slips, as the update each would produce from the (correct) moments m and v.
_MISTAKES = {
    "the bias corrections are missing": lambda m, v, c1, c2, lr, eps: -lr * m / (v.sqrt() + eps),
    "only 1 - beta1**t is applied; also divide sqrt(v) by sqrt(1 - beta2**t)": (
        lambda m, v, c1, c2, lr, eps: -lr / c1 * m / (v.sqrt() + eps)
    ),
    "only 1 - beta2**t is applied; also divide lr by 1 - beta1**t": (
        lambda m, v, c1, c2, lr, eps: -lr * m / ((v / c2).sqrt() + eps)
    ),
    "eps is inside the square root: Adam adds eps after the sqrt": (
        lambda m, v, c1, c2, lr, eps: -lr / c1 * m / (v / c2 + eps).sqrt()
    ),
    "the sqrt is missing: divide by sqrt(v) / sqrt(1 - beta2**t) + eps": (
        lambda m, v, c1, c2, lr, eps: -lr / c1 * m / (v / c2**0.5 + eps)
    ),
    "the sqrt is missing: divide by sqrt(v_hat) + eps, not v_hat + eps": (
        lambda m, v, c1, c2, lr, eps: -lr / c1 * m / (v / c2 + eps)
    ),
    "the sign is flipped: Adam steps against m": (
        lambda m, v, c1, c2, lr, eps: lr / c1 * m / ((v / c2).sqrt() + eps)
    ),
}


def _closest_slip(update: torch.Tensor, state: State, problem: Problem, step: int) -> str | None:
    """The classic slip whose update is closest to the learner's, or None when the right
    formula is closer than every slip (then the learner's maths is right, only its order)."""
    c1, c2 = bias_corrections(*problem.betas, step)
    m, v = state["exp_avg"], state["exp_avg_sq"]
    right = -problem.lr / c1 * m / ((v / c2).sqrt() + problem.eps)
    formulas = {None: right} | {
        mistake: formula(m, v, c1, c2, problem.lr, problem.eps)
        for mistake, formula in _MISTAKES.items()
    }
    distance = {k: (update - f).abs().max().item() for k, f in formulas.items()}
    return min(distance, key=lambda k: distance[k])


def _check_adam_step(answer: Callable[..., None]) -> Verdict:
    """Run the learner's step beside torch.optim.Adam on every hidden problem, bitwise."""
    if not callable(answer):
        return failed(
            "pass your step *function* (def my_step(param, grad, state, lr, betas, eps)),"
            " not its result",
            type(answer).__name__,
            "a function",
        )
    for problem in PROBLEMS:
        verdict = _run_problem(answer, problem)
        if verdict is not None:
            return verdict
    return passed(
        f"bitwise equal to torch.optim.Adam on {len(PROBLEMS)} hidden problems (layouts, exact "
        "zeros, other hyperparameters), state layout included"
    )


def _run_problem(answer: Callable[..., None], problem: Problem) -> Verdict | None:
    ours = problem.start().requires_grad_()
    theirs = torch.nn.Parameter(problem.start())
    opt = torch.optim.Adam([theirs], lr=problem.lr, betas=problem.betas, eps=problem.eps)
    state: State = {}
    for step, grad in enumerate(problem.grads(), start=1):
        theirs.grad = grad.clone()
        before = ours.detach().clone()
        with torch.no_grad():
            answer(ours, grad.clone(), state, lr=problem.lr, betas=problem.betas, eps=problem.eps)
        opt.step()
        verdict = _compare_step(ours, before, theirs, state, opt.state[theirs], problem, step)
        if verdict is not None:
            return verdict
    return None


def _compare_step(ours, before, theirs, state, expected_state, problem, step) -> Verdict | None:
    where = f"after step {step} on {problem.what}"
    for key in STATE_KEYS:
        if key not in state:
            return failed(
                f"{where}, state has no {key!r}: keep Adam's running means in "
                "state['exp_avg'] and state['exp_avg_sq'], and count steps in state['step']",
                sorted(state),
                list(STATE_KEYS),
            )
        mine, want = state[key], expected_state[key]
        if mine.stride() != want.stride():
            return failed(
                f"{where}: your state[{key!r}] has stride {mine.stride()}, torch's has the "
                f"parameter's stride {want.stride()}; create it with "
                "torch.zeros_like(param, memory_format=torch.preserve_format)",
                mine.stride(),
                want.stride(),
            )
        if not torch.equal(mine, want):
            return failed(
                f"{where}, state[{key!r}] differs (max diff "
                f"{(mine - want).abs().max().item():.3g}): check the running means and betas",
                _short(mine),
                _short(want),
            )
    mine, want = ours.detach(), theirs.detach()
    if torch.equal(mine, want):
        return None
    if torch.equal(mine, before) and not torch.equal(want, before):
        return failed(
            f"{where} the parameter you were given did not change at all, though torch's did. "
            "If you wrote `param = param - ...`, the new tensor was bound to the local name "
            "`param` and never written into the optimizer's tensor: a lost write, this course's "
            "theme. Update it in place (param.addcdiv_(...), or param -= ...).",
            "unchanged",
            "updated in place",
        )
    diff = (mine - want).abs().max().item()
    slip = _closest_slip(mine - before, state, problem, step)
    if slip is not None:
        return failed(
            f"{where} the moments match but the parameter differs (max diff {diff:.3g}): "
            f"your update matches a known slip: {slip}",
            _short(mine),
            _short(want),
        )
    if torch.allclose(mine, want, rtol=1e-6, atol=1e-9):
        return failed(
            f"{where} your parameter is within {diff:.2g} of torch's but not bitwise equal. "
            "Float arithmetic depends on the order of operations: follow torch's exactly "
            "(denom = sqrt(v) / sqrt(1 - beta2**t) + eps, then one addcdiv_ with "
            "value = -lr / (1 - beta1**t)). 'Frozen' in this course means bitwise; so does "
            "'the same as torch'.",
            _short(mine),
            _short(want),
        )
    return failed(
        f"{where} the moments match but the parameter differs (max diff {diff:.3g}): check "
        "the bias corrections 1 - beta**step, the sqrt in the denominator, eps and the sign",
        _short(mine),
        _short(want),
    )


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
        beta1, beta2 = (0.9, 0.999) if flaw == "fixed betas" else betas
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
        if flaw == "eps inside the sqrt":
            denom = (state["exp_avg_sq"] / c2 + eps).sqrt()
        else:
            root = state["exp_avg_sq"] if flaw == "no sqrt" else state["exp_avg_sq"].sqrt()
            denom = (root / c2**0.5).add_(eps)
        if flaw == "rebinding":
            param = param - lr / c1 * state["exp_avg"] / denom  # noqa: F841 (never written back)
        else:
            param.addcdiv_(state["exp_avg"], denom, value=-lr / c1)

    return my_step


def _reordered_step():
    """Mathematically Adam, in another order of operations: close to torch, not bitwise."""

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
        m_hat = state["exp_avg"] / (1 - beta1**t)
        v_hat = state["exp_avg_sq"] / (1 - beta2**t)
        param -= lr * m_hat / (v_hat.sqrt() + eps)

    return my_step


register(
    Exercise(
        name="03.adam_step",
        prompt="Write my_step(param, grad, state, lr, betas, eps): one Adam step, in place, "
        "keeping state['step'], state['exp_avg'] and state['exp_avg_sq'] as torch does.",
        checker=_check_adam_step,
        hint="Create the state with torch.zeros_like(param, memory_format=torch.preserve_format) "
        "and count steps from 1. Then exp_avg.lerp_(grad, 1 - beta1); "
        "exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2); "
        "denom = sqrt(exp_avg_sq) / sqrt(1 - beta2**t) + eps; "
        "param.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**t)).",
        reference=_reference_step,
        wrong_answers=(
            lambda: _flawed_step("no bias correction"),
            lambda: _flawed_step("no sqrt"),
            lambda: _flawed_step("contiguous state"),
            lambda: _flawed_step("eps inside the sqrt"),
            lambda: _flawed_step("rebinding"),
            lambda: _flawed_step("fixed betas"),
            _reordered_step,
        ),
    )
)

# ---- 03.isolate_op ---------------------------------------------------------------------------

OUTCOMES = ("updates", "lost")


@dataclass(frozen=True)
class Isolation:
    """One hidden op-isolation case: a profile, an op, and the two layouts."""

    profile: emps.Profile
    op: str
    output_layout: str
    input_layout: str = "contiguous"

    @property
    def what(self) -> str:
        """The case in words (the profile by name: the learner chose none of it)."""
        return (
            f"{self.op} with a {self.output_layout} output and {self.input_layout} inputs, "
            f"on the {self.profile.name} profile"
        )


ISOLATIONS = (
    *(Isolation(emps.TORCH_2_2_1, op, "transposed") for op in OPS),
    Isolation(emps.TORCH_2_2_1, "addcmul_", "contiguous", "transposed"),
    Isolation(emps.TORCH_2_2_1, "addcdiv_", "step-sliced"),
    Isolation(emps.TORCH_2_2_1, "addcmul_", "storage-offset"),
    Isolation(emps.TORCH_2_2_1, "lerp_", "contiguous", "step-sliced"),
    Isolation(emps.TORCH_2_4, "addcmul_", "transposed"),
    Isolation(emps.FIXED_MACOS14, "addcdiv_", "transposed"),
    Isolation(emps.MACOS15, "addcdiv_", "step-sliced"),
)


def _run_isolation(fn: Callable, case: Isolation) -> object:
    with emps.use_profile(case.profile):
        return fn(case.op, case.output_layout, case.input_layout)


@functools.cache
def _expected_isolation(index: int) -> str:
    return _run_isolation(_reference_isolate_op(), ISOLATIONS[index])


def _check_isolate_op(fn: Callable) -> Verdict:
    if not callable(fn):
        return failed("pass your function isolate_op(op, output_layout, input_layout)")
    for index, case in enumerate(ISOLATIONS):
        got = _run_isolation(fn, case)
        if got not in OUTCOMES:
            return failed(f"return one of {OUTCOMES}; for {case.what} you returned {got!r}")
        want = _expected_isolation(index)
        if got != want:
            return failed(
                f"for {case.what} the op's result {'is lost' if want == 'lost' else 'arrives'}, "
                f"and your experiment said {got!r}. Run the op on the emulated device (the active "
                "profile decides), from a non-zero start, and compare the output with the CPU's "
                "answer: only a measurement follows the profile",
                got,
                want,
            )
    return passed(
        f"right on {len(ISOLATIONS)} hidden cases: on the 2.2.1 profile addcmul_ and addcdiv_ "
        "lose their result when their *output* is non-contiguous, whatever the inputs; later "
        "profiles fixed it. lerp_ and mul_ always update."
    )


def _reference_isolate_op():
    def isolate_op(op, output_layout, input_layout):
        gen = torch.Generator().manual_seed(0)
        start = torch.randn(6, 4, generator=gen)  # non-zero: "nothing" differs from "zeros"
        a, b = torch.randn(6, 4, generator=gen), torch.rand(6, 4, generator=gen) + 0.5
        expected = start.clone()
        OP_CALLS[op](expected, a, b)  # the CPU's answer
        out = laid_out(start, output_layout, emps.DEVICE)
        OP_CALLS[op](out, *(laid_out(t, input_layout, emps.DEVICE) for t in (a, b)))
        return "updates" if torch.equal(out.cpu(), expected) else "lost"

    return isolate_op


def _isolate_from_memory():
    def isolate_op(op, output_layout, input_layout):  # the story's table, not a measurement
        broken = op in ("addcmul_", "addcdiv_")
        return "lost" if broken and output_layout != "contiguous" else "updates"

    return isolate_op


def _isolate_by_inputs():
    def isolate_op(op, output_layout, input_layout):
        broken = op in ("addcmul_", "addcdiv_")
        return "lost" if broken and input_layout != "contiguous" else "updates"

    return isolate_op


def _isolate_with(where: str):
    """The experiment, run on the CPU or into a contiguous copy of the output, or from zeros."""

    def isolate_op(op, output_layout, input_layout):
        gen = torch.Generator().manual_seed(0)
        zeros = where == "zeros"
        start = torch.zeros(6, 4) if zeros else torch.randn(6, 4, generator=gen)
        a, b = torch.randn(6, 4, generator=gen), torch.rand(6, 4, generator=gen) + 0.5
        device = "cpu" if where == "cpu" else emps.DEVICE
        out = laid_out(start, output_layout, device)
        if where == "contiguous copy":
            out = out.contiguous()
        OP_CALLS[op](out, *(laid_out(t, input_layout, device) for t in (a, b)))
        return "lost" if torch.equal(out.cpu(), start) else "updates"

    return isolate_op


register(
    Exercise(
        name="03.isolate_op",
        prompt="Write isolate_op(op, output_layout, input_layout) -> 'updates' or 'lost': run "
        "one of Adam's ops once on the emulated device and say whether its result arrived.",
        checker=_check_isolate_op,
        hint="Start the output at non-zero values, lay out output and inputs with "
        "laid_out(values, layout, emps.DEVICE), run OP_CALLS[op](out, a, b), and compare "
        "out.cpu() bitwise with the same op run on plain CPU tensors.",
        reference=_reference_isolate_op,
        wrong_answers=(
            _isolate_from_memory,
            _isolate_by_inputs,
            lambda: _isolate_with("cpu"),
            lambda: _isolate_with("contiguous copy"),
            lambda: _isolate_with("zeros"),
        ),
    )
)


def _which_ops() -> str:
    lost = tuple(
        op for op in OPS if _reference_isolate_op()(op, "transposed", "contiguous") == "lost"
    )
    names = {(): "none", OPS: "all four", ("lerp_", "mul_"): "lerp_ and mul_"}
    return names.get(lost, " and ".join(lost))


register_prediction(
    Prediction(
        "03.which_ops",
        "On the story's profile, which of Adam's four in-place ops lose their result when their "
        "output is non-contiguous?",
        ("all four", "lerp_ and mul_", "addcmul_ and addcdiv_", "none"),
        _which_ops,
        "addcmul_ and addcdiv_: exactly the op that writes exp_avg_sq (so it stays 0) and the "
        "op that writes the parameter (so it never moves). lerp_ and mul_ are fine: the bug is "
        "in two kernels, not in non-contiguous tensors as such.",
        answer_words=("stays exactly 0", "never moves"),
    )
)

# ---- 03.predict_explodes ---------------------------------------------------------------------


def _check_explodes(answer: object) -> Verdict:
    """The learner names the switchboard case that explodes; the measured outcomes decide."""
    labels = [case.label for case in CASES]
    if answer not in labels:
        return failed(
            f"answer with one of the case labels: {', '.join(map(repr, labels))}",
            repr(answer),
            "one of the labels",
        )
    results = {o.case.label: o for o in outcomes()}
    chosen = results[answer]
    if chosen.verdict == "explodes":
        return passed(f"{answer!r} explodes: {chosen.case.why}")
    return failed(
        f"{answer!r} {chosen.verdict}: {chosen.case.why}", answer, "the one that explodes"
    )


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
