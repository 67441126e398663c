"""02.sgd_step and 02.encoder_moves: one step by hand, and which optimizer moves the encoder.

A manual step is checked on the parameter objects themselves, not on the list handed in, so a
write that never reaches them (a rebound name, a replaced list entry or slice, `p.data = ...`)
is caught and named: the lost write the course is about must not pass its own checker. The
experiment runs on hidden benches, read from the bench's step log as much as from the answer.
"""

from __future__ import annotations

import contextlib
import math
import operator
from collections.abc import Callable, Iterator

import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from course import emps
from course.exercises import Exercise, Verdict, failed, passed, register
from course.layout.named import laid_out

EXPECTED = "p - lr * grad, written into p"
COPY_CAUSE = (
    "your write went into a copy. `.contiguous()` and `.reshape()` of a non-contiguous tensor, "
    "`.cpu()` of one on another device and `.clone()` return new tensors, and a write into them "
    "never reaches the parameter: a lost write, the theme of this course."
)


class SgdCase:
    """Parameters (with gradients) handed to the learner's step, and what must become of them."""

    def __init__(self, what: str, params: list[torch.nn.Parameter], lr: float) -> None:
        self.what, self.params, self.lr = what, params, lr
        self.start = [p.detach().cpu().clone() for p in params]
        self.grads = [p.grad.detach().cpu().clone() for p in params]
        self.memory = [(p.data_ptr(), p.stride()) for p in params]
        twins = [torch.nn.Parameter(p.detach().clone()) for p in params]
        for twin, p in zip(twins, params, strict=True):
            twin.grad = p.grad.clone()
        torch.optim.SGD(twins, lr=lr).step()
        self.want = [twin.detach().cpu() for twin in twins]


WEIGHT_AND_BIAS = ((6, 4), (5,))
SGD_CASES = (  # what, the 2-D parameters' layout, device, lr, shapes
    (
        "a contiguous weight and a bias on the CPU, lr 0.25",
        "contiguous",
        "cpu",
        0.25,
        WEIGHT_AND_BIAS,
    ),
    (
        "a weight and a bias on the emulated device",
        "transposed",
        emps.DEVICE,
        1e-3,
        WEIGHT_AND_BIAS,
    ),
    ("three parameters on the CPU, lr 0.1", "transposed", "cpu", 0.1, ((3, 7), (7,), (2, 3))),
)


def _sgd_cases() -> list[SgdCase]:
    """Contiguous CPU parameters first: a write that lands there and is lost on a later case
    went into a copy (`.cpu()` on the device, `.contiguous()` of a transposed weight)."""
    gen = torch.Generator().manual_seed(2)
    cases = []
    for what, layout, device, lr, shapes in SGD_CASES:
        params = []
        for shape in shapes:
            kind = layout if len(shape) == 2 else "contiguous"
            p = torch.nn.Parameter(laid_out(torch.randn(shape, generator=gen), kind, device))
            p.grad = laid_out(torch.randn(shape, generator=gen), kind, device)
            params.append(p)
        cases.append(SgdCase(what, params, lr))
    return cases


@contextlib.contextmanager
def _optimizer_steps() -> Iterator[list[str]]:
    """The class names of every torch optimizer stepped inside the block."""
    seen: list[str] = []
    handle = register_optimizer_step_pre_hook(lambda opt, *_: seen.append(type(opt).__name__))
    try:
        yield seen
    finally:
        handle.remove()


def _run(fn: Callable, case: SgdCase, given: list) -> tuple[object, Verdict | None]:
    """The step's return value, or what made it no step of the learner's own."""
    with _optimizer_steps() as stepped:
        try:
            result = fn(given, case.lr)
        except RuntimeError as error:
            if "leaf Variable" not in str(error):
                raise
            return None, failed(
                f"on {case.what} autograd refused your in-place update "
                f"({str(error).splitlines()[0]}): a parameter requires grad, so write into it "
                "inside `with torch.no_grad():`"
            )
    if stepped:
        return None, failed(
            f"on {case.what} your step called torch.optim.{stepped[0]}: write the update "
            "yourself. The point is a second, independent step to hold beside torch's "
            "optimizers; torch's own SGD cannot test torch's SGD."
        )
    if any(
        p.grad is None or not torch.equal(p.grad.detach().cpu(), g)
        for p, g in zip(case.params, case.grads, strict=True)
    ):
        return None, failed(
            f"on {case.what} your step changed p.grad, an input: the gradient must stay as "
            "backward left it (a second optimizer, or a check, reads it; clearing it is "
            "zero_grad's job). Write the update into the parameter only."
        )
    return result, None


def _lost_write(case: SgdCase, given: list, result: object, landed: bool) -> Verdict | None:
    """Which write never reached the parameters, when some did not change at all.

    `landed`: the same step reached the parameters of an earlier case (contiguous, on the CPU),
    so a write lost here went into a copy that only these parameters' layout or device make."""
    now = [p.detach().cpu() for p in case.params]
    unchanged = [
        i for i, (a, b) in enumerate(zip(now, case.start, strict=True)) if torch.equal(a, b)
    ]
    if not unchanged:
        return None
    if len(unchanged) < len(now):
        i = unchanged[0]
        if set(unchanged) == {j for j, p in enumerate(case.params) if not p.is_contiguous()}:
            message = (
                f"on {case.what} the non-contiguous parameter {i} (shape {list(now[i].shape)}, "
                f"stride {case.params[i].stride()}) is unchanged after your step and the "
                f"contiguous ones moved: {COPY_CAUSE} Write into p itself (`p -= ...`)."
            )
        else:
            message = (
                f"on {case.what} parameter {i} (shape {list(now[i].shape)}) is unchanged after "
                "your step: update every parameter in the list, biases too"
            )
        return failed(message, "unchanged", EXPECTED)
    if len(given) != len(case.params) or any(map(operator.is_not, given, case.params)):
        cause = (
            "your step put new tensors into the list (`params[i] = ...` or a slice assignment "
            "`params[:] = ...`). The model holds its own parameters, not your list: they never "
            "received the write. A lost write, the theme of this course."
        )
    elif result is not None:
        cause = (
            "your function returned the new values, and the model never sees a return value: "
            "a lost write."
        )
    elif landed:
        cause = f"on contiguous CPU parameters your step works, here it does not: {COPY_CAUSE}"
    else:
        cause = (
            "the new values went where the model never looks. If you wrote `p = p - lr * "
            "p.grad`, the new tensor was bound to the local name `p`; a write into a copy "
            "(`.clone()`, `.cpu()`, `.contiguous()`) is lost the same way: the model's "
            "parameter never received the write, a lost write, the theme of this course."
        )
    return failed(
        f"on {case.what} the parameters are unchanged after your step: {cause} Write into "
        "each tensor in place (`p -= ...` or `p.sub_(...)` under torch.no_grad()).",
        "unchanged",
        EXPECTED,
    )


def _swapped_memory(case: SgdCase) -> Verdict | None:
    for i, (p, (address, stride)) in enumerate(zip(case.params, case.memory, strict=True)):
        if p.data_ptr() != address or p.stride() != stride:
            return failed(
                f"on {case.what} parameter {i} has new memory after your step: `p.data = ...` "
                "swaps in another tensor instead of writing into the parameter's own memory, "
                "so anything else holding that memory (a view, an optimizer's state) never "
                "sees the write: a lost write. Write in place: `p -= ...` under torch.no_grad()."
            )
    return None


def _wrong_values(case: SgdCase) -> Verdict | None:
    cases = zip(case.params, case.start, case.grads, case.want, strict=True)
    for i, (p, start, grad, want) in enumerate(cases):
        now = p.detach().cpu()
        if not torch.allclose(now, want, rtol=1e-6, atol=1e-7):
            return failed(
                f"on {case.what} parameter {i} differs from torch.optim.SGD's step (max diff "
                f"{(now - want).abs().max().item():.3g}): {_step_cause(case, start, now, grad)}"
            )
    return None


def _step_cause(case: SgdCase, start: torch.Tensor, now: torch.Tensor, grad: torch.Tensor) -> str:
    """What the step did instead, when it moved every element by one multiple of its gradient."""
    moving = grad != 0
    rates = ((start - now)[moving] / grad[moving]).double()
    rate = rates.mean().item() if moving.any() else math.nan
    if not torch.allclose(rates, torch.full_like(rates, rate), rtol=1e-3) or math.isnan(rate):
        return "SGD moves each parameter by -lr times its gradient, element by element"
    if math.isclose(rate, -case.lr, rel_tol=1e-3):
        return "your step went uphill, +lr * grad: gradient DEscent subtracts"
    if math.isclose(rate, 1.0, rel_tol=1e-3):
        return f"your step ignored lr (= {case.lr} here): it moved by the whole gradient"
    if math.isclose(rate, case.lr, rel_tol=1e-3):
        return (
            "your step is about -lr * grad, but not exactly: compute it in the parameter's own "
            "dtype, without rounding or a lower precision on the way"
        )
    return (
        f"your step moved each parameter by {rate:.3g} times its gradient, and lr is "
        f"{case.lr} here: use the `lr` your function is given, once (a number written into "
        "the step is right for one learning rate only)"
    )


def _check_sgd_step(fn: Callable) -> Verdict:
    landed = False  # whether the step reached an earlier case's parameters
    for case in _sgd_cases():
        given = list(case.params)
        result, verdict = _run(fn, case, given)
        verdict = verdict or _lost_write(case, given, result, landed) or _swapped_memory(case)
        verdict = verdict or _wrong_values(case)
        if verdict is not None:
            return verdict
        landed = True
    return passed(
        "an in-place SGD step, equal to torch.optim.SGD's, on every parameter and device."
    )


def sgd_step(params: list[torch.nn.Parameter], lr: float) -> None:
    """The manual step one hidden bench of 02.encoder_moves hands to the learner's experiment:
    bitwise `p -= lr * p.grad` on each parameter, as one foreach call (the notebook's answer
    itself must not ship in the student release)."""
    with torch.no_grad():
        torch._foreach_sub_(params, torch._foreach_mul([p.grad for p in params], lr))


register(
    Exercise(
        name="02.sgd_step",
        prompt="Write sgd_step(params, lr): one plain SGD step, p <- p - lr * p.grad, in place, "
        "for every parameter in the list (without torch.optim).",
        checker=_check_sgd_step,
        hint="Inside a torch.no_grad() block, update each tensor in place (`p -= ...` or "
        "`p.sub_(...)`): a new tensor bound to a name, or put into the list, is not the "
        "model's parameter.",
        minutes=8,
    )
)
