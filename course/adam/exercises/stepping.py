"""03.adam_step: Adam by hand, bitwise equal to torch.optim.Adam on problems the learner never sees.

Bitwise, because "frozen" meant bitwise: and bitwise like torch means torch's own ops in torch's
order, not only its formula. Each step of each hidden problem (`problems`) is checked in the
order a mistake would show: a ready-made Adam, the gradient written into, the parameter's memory
swapped, the state (keys, count, tensors written in place with the parameter's strides, values),
the parameter, and last the ops that wrote them: `param.sub_(...)` reaches torch's bits on the
CPU, but on the story's device it is another kernel than torch's `addcdiv_`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.optim.adam as torch_adam

from course.adam import scratch
from course.adam.exercises.common import Writes
from course.adam.exercises.problems import (
    PROBLEMS,
    TORCH_WRITES,
    Problem,
    Step,
    moment_verdict,
    param_verdict,
)
from course.adam.scratch import STATE_KEYS, State
from course.exercises import Exercise, Verdict, failed, is_scaffold, passed, ready_made, register

READY_MADE_STEPS = {  # the course's own step, and torch's Adam on every code path
    "course.adam.scratch.adam_step": scratch.adam_step,
    "course.adam.scratch.update_moments": scratch.update_moments,
    "torch.optim.Adam": torch_adam._single_tensor_adam,
    "torch.optim.Adam (foreach)": torch_adam._multi_tensor_adam,
    "torch.optim.Adam (fused)": torch_adam._fused_adam,
}
STATE_CREATION = ("zero", "fill")  # torch.empty_like(param).zero_() makes the state, too


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
        verdict = run_problem(answer, problem)
        if verdict is not None:
            return verdict
    return passed(
        f"bitwise equal to torch.optim.Adam on {len(PROBLEMS)} hidden problems (layouts from "
        "1-D to 3-D, a gradient in another layout, exact zeros, other lr, betas and eps), "
        "state layout included"
    )


def run_problem(answer: Callable[..., None], problem: Problem) -> Verdict | None:
    """The first thing wrong on one hidden problem, or None when every step is bitwise right.
    The state's writers on step 1 are told only once every value of the problem is right: from
    zeros, mul_ then add_ reaches lerp_'s bits on step 1, and step 2's rounding teaches more."""
    ours = problem.start().requires_grad_()
    theirs = torch.nn.Parameter(problem.start())
    opt = torch.optim.Adam([theirs], lr=problem.lr, betas=problem.betas, eps=problem.eps)
    state: State = {}
    kept: dict[str, tuple[torch.Tensor, int]] = {}  # the state tensors of step 1, in place after
    first_writes: Verdict | None = None
    for number, grad in enumerate(problem.grads(), start=1):
        before = opt.state[theirs]
        moments = {k: before.get(k, torch.zeros_like(grad)).clone() for k in STATE_KEYS}
        memory = (ours.data_ptr(), ours.stride())
        step = Step(problem, number, grad, ours.detach().clone(), memory, moments)
        given = grad.clone()
        with Writes() as writes:
            verdict = _call(answer, ours, given, state, step)
        theirs.grad = grad.clone()
        opt.step()
        verdict = (
            verdict
            or _handed(given, ours, step)
            or _state_verdict(state, opt.state[theirs], kept, step)
            or param_verdict(ours.detach(), theirs.detach(), state, step, writes.into(ours))
            or _writers_verdict(writes, _watched(ours, state, number), step)
        )
        if verdict is not None:
            return verdict
        if number == 1:
            first_writes = _writers_verdict(writes, {k: state[k] for k in STATE_KEYS}, step)
    return first_writes


def _call(answer: Callable, param: torch.Tensor, grad: torch.Tensor, state: State, step: Step):
    problem, on = step.problem, f"on step {step.number} of {step.problem.what}"
    with ready_made(READY_MADE_STEPS) as used, torch.no_grad():
        try:
            answer(param, grad, state, lr=problem.lr, betas=problem.betas, eps=problem.eps)
        except ZeroDivisionError as error:
            return failed(
                f"{on} your step divided by zero ({error}): 1 - beta**t is 0 at t = 0. Count "
                "steps from 1: add 1 to state['step'] before the bias corrections use it"
            )
        except Exception as error:
            if is_scaffold(error):
                raise
            return failed(f"{on} your step raised {type(error).__name__}: {error}")
    if not used:
        return None
    cause = (
        "torch's own Adam: the exercise holds *your* step beside it, and torch's Adam cannot "
        "test torch's Adam"
        if used[0].startswith("torch")
        else f"{used[0]}, the course's own Adam: it passes, and tests nothing you wrote"
    )
    return failed(f"your step ran {cause}. Write the update with torch's tensor ops yourself.")


def _handed(grad: torch.Tensor, param: torch.Tensor, step: Step) -> Verdict | None:
    """What the step did to what it was handed: the gradient written into, the parameter's
    memory swapped for another tensor's."""
    if not torch.equal(grad, step.grad):
        return failed(
            f"{step.where} the gradient you were given has changed: your step wrote into it "
            "(grad.mul_(grad)? grad.pow_(2)?). Adam reads grad, never writes it: a second "
            "optimizer, a gradient check or the next accumulation reads the same tensor. Square "
            "it into a new tensor, or let addcmul_(grad, grad, ...) do the product."
        )
    if (param.data_ptr(), param.stride()) != step.memory:
        return failed(
            f"{step.where} the parameter has new memory: `param.data = ...` swaps in another "
            "tensor instead of writing into the parameter's own memory, so anything else "
            "holding it (a view, a tied weight) never sees the write. Write in place: "
            "param.addcdiv_(...)."
        )
    return None


def _state_verdict(
    state: State, expected: State, kept: dict[str, tuple[torch.Tensor, int]], step: Step
) -> Verdict | None:
    verdict = _state_keys(state, step)
    if verdict is not None:
        return verdict
    for key in STATE_KEYS:
        mine = state[key]
        if not isinstance(mine, torch.Tensor):
            return failed(f"{step.where}, state[{key!r}] is a {type(mine).__name__}, not a tensor")
        kept.setdefault(key, (mine, mine.data_ptr()))
        verdict = (
            _rebound(key, mine, kept[key], step)
            or _strides(key, mine, expected[key], step)
            or moment_verdict(key, mine, expected[key], step)
        )
        if verdict is not None:
            return verdict
    return None


def _state_keys(state: State, step: Step) -> Verdict | None:
    missing = [key for key in ("step", *STATE_KEYS) if key not in state]
    if missing:
        others = sorted(set(map(str, state)) - {"step", *STATE_KEYS})
        yours = f" (yours holds {', '.join(map(repr, others))})" if others else ""
        return failed(
            f"{step.where}, state has no {missing[0]!r}{yours}: keep the state as torch does, "
            "the step count in state['step'] and the running means in state['exp_avg'] and "
            "state['exp_avg_sq'] (a checkpoint, or another optimizer's code, reads them there)",
            sorted(map(str, state)),
            ["exp_avg", "exp_avg_sq", "step"],
        )
    count = state["step"]
    if isinstance(count, torch.Tensor) and count.numel() == 1:
        count = count.item()
    if isinstance(count, int | float) and count == step.number:
        return None
    return failed(
        f"{step.where}, state['step'] is {count!r}: count the steps taken, from 1 (the first "
        "step is t = 1, so 1 - beta**t is never 0)",
        count,
        step.number,
    )


def _rebound(key: str, mine: torch.Tensor, kept: tuple[torch.Tensor, int], step: Step):
    if mine is kept[0] and mine.data_ptr() == kept[1]:
        return None
    return failed(
        f"{step.where}, state[{key!r}] is a new tensor: your step built a new one and put it "
        "into the dict instead of writing into the running mean. torch updates its state in "
        "place (lerp_, mul_, addcmul_): those in-place writes into the parameter's layout are "
        "the very writes this story's bug loses, and an optimizer's state_dict holds the "
        "original tensors."
    )


def _strides(key: str, mine: torch.Tensor, want: torch.Tensor, step: Step) -> Verdict | None:
    if mine.stride() == want.stride():
        return None
    like_grad = mine.stride() == step.grad.stride()
    return failed(
        f"{step.where}: your state[{key!r}] has stride {mine.stride()}, torch's has the "
        f"parameter's stride {want.stride()}"
        + (" (yours follows the gradient's layout: it is the parameter's state)" * like_grad)
        + "; create it with torch.zeros_like(param, memory_format=torch.preserve_format)",
        mine.stride(),
        want.stride(),
    )


def _watched(param: torch.Tensor, state: State, number: int) -> dict[str, torch.Tensor]:
    """The tensors whose writers are checked after step `number`'s values: the parameter, and
    the state from step 2 on (step 1's are told at the end of the problem, see run_problem)."""
    return {"param": param} | ({k: state[k] for k in STATE_KEYS} if number >= 2 else {})


def _writers_verdict(writes: Writes, tensors: dict[str, torch.Tensor], step: Step):
    """Torch's bits reached with other ops: not torch's step (a first step special-cased with
    add_ reaches torch's bits from zeros). On the step that creates the state, zeroing it
    (zero_, fill_) is its creation."""
    for name, tensor in tensors.items():
        ops, spelled = TORCH_WRITES[name]
        creation = STATE_CREATION if name != "param" and step.number == 1 else ()
        foreign = ", ".join(op + "_" for op in sorted(set(writes.into(tensor)) - {*ops, *creation}))
        if not foreign:
            continue
        what = "the parameter" if name == "param" else f"state[{name!r}]"
        return failed(
            f"{step.where} your numbers are torch's to the bit, but your step wrote {what} with "
            f"{foreign}, where torch's step runs {spelled}"
            + (", on the first step too" if step.number == 1 else "")
            + ". On the CPU the two agree; on a device each op is a kernel of its own, and the "
            "rest of this lesson tests torch's ops one by one, so a step that is torch's must "
            "run them, writing into the tensor itself.",
            foreign,
            spelled,
        )
    return None


register(
    Exercise(
        name="03.adam_step",
        prompt="Write my_step(param, grad, state, lr, betas, eps): one Adam step, in place, "
        "keeping state['step'], state['exp_avg'] and state['exp_avg_sq'] as torch does, "
        "bitwise equal to torch.optim.Adam: torch's own ops, in torch's order.",
        checker=_check_adam_step,
        hint="Do what torch's _single_tensor_adam does on its default path, op for op and in "
        "its order (read it: inspect.getsource(torch.optim.adam._single_tensor_adam)): the "
        "state starts as zeros like the parameter, its memory format kept; the step count "
        "starts at 1; the first average is updated in place with lerp_, the second with mul_ "
        "then addcmul_; the square root of the second bias correction divides "
        "sqrt(exp_avg_sq) before eps is added, and the first divides the learning rate in "
        "the step that addcdiv_ applies.",
        minutes=20,
    )
)
