"""Adam from scratch, in the order torch's single-tensor path runs it, proven equal to torch's.

Why from scratch: the story turns on *which* tensor operations Adam runs on the parameter's
layout. Written out, one step is five in-place ops on three tensors, and the state tensors are
created with `zeros_like(..., memory_format=torch.preserve_format)`, so a non-contiguous
parameter gets non-contiguous state. `compare_with_torch` shows the result matches
`torch.optim.Adam` (default path: `_single_tensor_adam`) bit for bit.

`adam_step` is the answer to notebook 03's first exercise, so the notebook shows it only after
that exercise, and the checker (course.adam.exercises.stepping) recognises it handed in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from course import emps
from course.dispatch.tracer import OpRecord, optimizer_state_names, trace
from course.errors import require_choice, require_int, require_seed, require_shape

MAX_ADAM_STEPS = 1000  # steps of the from-scratch Adam (comparisons and gradient streams)

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
    require_shape("shape", shape, dims=2)
    require_seed(seed)
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
    require_int("steps", steps, 1, MAX_ADAM_STEPS)
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
    require_shape("shape", shape, dims=2)
    target = emps.DEVICE if device == "emps" else "cpu"
    gen = torch.Generator().manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(shape[::-1], generator=gen).T.clone().to(target))
    opt = torch.optim.Adam([weight], lr=1e-3)
    weight.grad = torch.randn(shape[::-1], generator=gen).T.clone().to(target)
    opt.step()  # creates the state (two zeros_like), untraced
    weight.grad = torch.randn(shape[::-1], generator=gen).T.clone().to(target)
    return trace(opt.step, optimizer_state_names(opt, {"weight": weight}))
