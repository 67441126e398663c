"""Adam from scratch, in the order torch's single-tensor path runs it, proven equal to torch's.

Why from scratch: the story turns on *which* tensor operations Adam runs on the parameter's
layout. Written out, one step is five in-place ops on three tensors, and the state tensors are
created with `zeros_like(..., memory_format=torch.preserve_format)`, so a non-contiguous
parameter gets non-contiguous state. `compare_with_torch` shows the result matches
`torch.optim.Adam` (default path: `_single_tensor_adam`) bit for bit.

The exercises of notebook 03 are registered here (see `course.exercises`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from course import emps
from course.errors import require_choice
from course.exercises import Exercise, failed, passed, register
from course.switchboard import CASES, outcomes
from course.tracer import OpRecord, optimizer_state_names, trace

State = dict[str, Any]
STATE_KEYS = ("exp_avg", "exp_avg_sq")


def init_state(param: torch.Tensor, amsgrad: bool = False) -> State:
    """Fresh Adam state; `preserve_format` gives the state the parameter's strides (the story)."""
    state: State = {"step": 0}
    keys = STATE_KEYS + (("max_exp_avg_sq",) if amsgrad else ())
    for key in keys:
        state[key] = torch.zeros_like(param, memory_format=torch.preserve_format)
    return state


def update_moments(
    exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor, grad: torch.Tensor, beta1: float, beta2: float
) -> None:
    """The running means, in place: the lerp_, mul_ and addcmul_ of the story's table."""
    exp_avg.lerp_(grad, 1 - beta1)  # m = beta1 * m + (1 - beta1) * g
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)  # v = beta2 * v + (1 - beta2) * g²


def bias_corrections(beta1: float, beta2: float, step: int) -> tuple[float, float]:
    """1 - beta**t for both moments: the running means start at 0 and are too small early on."""
    return 1 - beta1**step, 1 - beta2**step


def adam_step(
    param: torch.Tensor,
    grad: torch.Tensor,
    state: State,
    *,
    lr: float = 1e-3,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    amsgrad: bool = False,
) -> None:
    """One Adam step on one parameter, in place, exactly as `_single_tensor_adam` does it."""
    beta1, beta2 = betas
    if not state:
        state.update(init_state(param, amsgrad))
    state["step"] += 1
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)  # L2 penalty folded into the gradient
    update_moments(state["exp_avg"], state["exp_avg_sq"], grad, beta1, beta2)
    correction1, correction2 = bias_corrections(beta1, beta2, state["step"])
    second = state["exp_avg_sq"]
    if amsgrad:  # normalise by the largest second moment seen so far
        torch.maximum(state["max_exp_avg_sq"], second, out=state["max_exp_avg_sq"])
        second = state["max_exp_avg_sq"]
    denom = (second.sqrt() / correction2**0.5).add_(eps)
    param.addcdiv_(state["exp_avg"], denom, value=-lr / correction1)  # p -= lr * m̂ / (√v̂ + eps)


@dataclass(frozen=True)
class Comparison:
    """How far the from-scratch Adam is from torch.optim.Adam after some steps."""

    steps: int
    weight_decay: float
    amsgrad: bool
    max_diff: dict[str, float]  # per tensor: "param", "exp_avg", "exp_avg_sq"(, "max_exp_avg_sq")

    @property
    def bitwise_equal(self) -> bool:
        """True when every tensor matches torch's exactly."""
        return all(d == 0.0 for d in self.max_diff.values())


def sample_problem(
    seed: int = 0, shape: tuple[int, int] = (6, 4), transposed: bool = True
) -> tuple[torch.Tensor, Callable[[torch.Tensor], Any]]:
    """A seeded parameter (transposed layout by default, like the story) and a loss to descend."""
    gen = torch.Generator().manual_seed(seed)
    start = torch.randn(shape[::-1], generator=gen)
    start = start.T.clone() if transposed else start.T.contiguous()  # (shape), stride (1, rows)
    target = torch.randn(shape, generator=gen)
    return start, lambda p: ((p - target) ** 2 * torch.arange(1.0, p.numel() + 1).view(shape)).sum()


def compare_with_torch(
    steps: int = 5,
    *,
    weight_decay: float = 0.0,
    amsgrad: bool = False,
    lr: float = 1e-2,
    seed: int = 0,
) -> Comparison:
    """Run our Adam and torch.optim.Adam side by side on copies of one parameter."""
    start, loss_fn = sample_problem(seed)
    ours = start.clone().requires_grad_()
    theirs = torch.nn.Parameter(start.clone())
    opt = torch.optim.Adam([theirs], lr=lr, weight_decay=weight_decay, amsgrad=amsgrad)
    state: State = {}
    for _ in range(steps):
        for p in (ours, theirs):
            p.grad = None
            loss_fn(p).backward()
        with torch.no_grad():
            adam_step(ours, ours.grad, state, lr=lr, weight_decay=weight_decay, amsgrad=amsgrad)
        opt.step()
    pairs = {"param": (ours, theirs)}
    pairs.update({key: (state[key], opt.state[theirs][key]) for key in state if key != "step"})
    diffs = {k: (a.detach() - b.detach()).abs().max().item() for k, (a, b) in pairs.items()}
    return Comparison(steps, weight_decay, amsgrad, diffs)


def comparison_rows(steps: int = 5) -> list[dict[str, object]]:
    """The from-scratch vs torch comparison for the option combinations Adam's step covers."""
    rows = []
    for weight_decay, amsgrad in ((0.0, False), (0.1, False), (0.0, True), (0.1, True)):
        result = compare_with_torch(steps, weight_decay=weight_decay, amsgrad=amsgrad)
        rows.append(
            {
                "weight_decay": weight_decay,
                "amsgrad": amsgrad,
                "steps": steps,
                "max |ours - torch|": max(result.max_diff.values()),
                "bitwise equal": result.bitwise_equal,
            }
        )
    return rows


def traced_step(shape: tuple[int, int] = (4, 3), device: str = "emps") -> list[OpRecord]:
    """The aten ops of one `optimizer.step()` on a transposed parameter (the second step,
    so the state exists and can be named; the first step also runs two `zeros_like`)."""
    require_choice("device", device, ("emps", "cpu"))
    target = emps.DEVICE if device == "emps" else "cpu"
    gen = torch.Generator().manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(shape[::-1], generator=gen).T.clone().to(target))
    opt = torch.optim.Adam([weight], lr=1e-3)
    weight.grad = torch.randn(shape[::-1], generator=gen).T.clone().to(target)
    opt.step()  # creates the state (two zeros_like), untraced
    weight.grad = torch.randn(shape[::-1], generator=gen).T.clone().to(target)
    return trace(opt.step, optimizer_state_names(opt, {"weight": weight}))


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
