"""03.adam_step: Adam by hand, bitwise equal to torch.optim.Adam on problems the learner never sees.

Bitwise, because "frozen" meant bitwise: and bitwise like torch means torch's own ops in torch's
order, not only its formula (`lerp_` and `beta1 * m + (1 - beta1) * g` written with `mul_` and
`add_` agree to rounding, not to the bit). The hidden problems vary every parameter the prompt
names, and each step is checked in the order a mistake would show: a ready-made Adam, the
gradient written into, the parameter's memory swapped, the state (keys, count, tensors written
in place with the parameter's strides, values), the parameter, and last the ops that wrote them:
`param.sub_(...)` reaches torch's bits on the CPU, but on the story's device it is another kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.optim.adam as torch_adam

from course.adam import scratch
from course.adam.exercises.common import Writes
from course.adam.scratch import STATE_KEYS, State, bias_corrections
from course.exercises import Exercise, Verdict, failed, is_scaffold, passed, ready_made, register
from course.layout.named import laid_out

DEFAULT_BETAS = (0.9, 0.999)  # torch.optim.Adam's, which a learner may type instead of `betas`
DEFAULT_LR, DEFAULT_EPS = 1e-3, 1e-8
READY_MADE_STEPS = {  # the course's own step, and torch's Adam on every code path
    "course.adam.scratch.adam_step": scratch.adam_step,
    "course.adam.scratch.update_moments": scratch.update_moments,
    "torch.optim.Adam": torch_adam._single_tensor_adam,
    "torch.optim.Adam (foreach)": torch_adam._multi_tensor_adam,
    "torch.optim.Adam (fused)": torch_adam._fused_adam,
}
# The ops torch's single-tensor step writes each tensor with (base names, see common.base_name).
TORCH_WRITES = {
    "param": (("addcdiv",), "param.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**t))"),
    "exp_avg": (("lerp",), "exp_avg.lerp_(grad, 1 - beta1)"),
    "exp_avg_sq": (
        ("mul", "addcmul"),
        "exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)",
    ),
}
STATE_CREATION = ("zero", "fill")  # torch.empty_like(param).zero_() makes the state, too


@dataclass(frozen=True)
class Problem:
    """A hidden Adam problem: a parameter, a gradient per step, and the hyperparameters."""

    what: str
    shape: tuple[int, ...]
    layout: str
    seed: int
    lr: float = 2e-2  # not 1e-2: at t = 1, 1e-3 / (1 - 0.9) would equal it, hiding an ignored lr
    betas: tuple[float, float] = DEFAULT_BETAS
    eps: float = DEFAULT_EPS
    steps: int = 4
    zeros: bool = False  # exact zeros and tiny values in the gradients
    grad_layout: str = ""  # the gradients' layout, when not the parameter's

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
            out.append(laid_out(grad, self.grad_layout or self.layout))
        return out


PROBLEMS = (
    Problem("a contiguous parameter", (6, 4), "contiguous", seed=1),
    Problem("a transposed (non-contiguous) parameter", (6, 4), "transposed", seed=2),
    Problem("gradients with exact zeros and tiny values", (5, 3), "transposed", seed=3, zeros=True),
    Problem(
        "lr 0.1, betas (0.5, 0.99), eps 1e-3",
        (4, 7),
        "contiguous",
        4,
        0.1,
        (0.5, 0.99),
        1e-3,
        zeros=True,
    ),
    Problem("a step-sliced parameter, 6 steps", (3, 5), "step-sliced", seed=5, steps=6),
    Problem("a bias (1-D), lr 0.05, eps 1e-6", (7,), "contiguous", seed=6, lr=0.05, eps=1e-6),
    Problem(
        "a 3-D parameter stored permuted, betas (0.8, 0.9)",
        (2, 3, 4),
        "permuted",
        7,
        betas=(0.8, 0.9),
    ),
    # the state follows the parameter's strides, not the gradient's
    Problem(
        "a transposed parameter whose gradient arrives contiguous",
        (4, 6),
        "transposed",
        8,
        0.03,
        grad_layout="contiguous",
    ),
)


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


@dataclass
class Step:
    """One step of one problem: what the learner was handed, and the tensors before it."""

    problem: Problem
    number: int
    grad: torch.Tensor  # a private copy: the learner's must still equal it afterwards
    param: torch.Tensor  # the parameter's values before the step
    memory: tuple[int, tuple[int, ...]]  # its data_ptr and stride
    moments: dict[str, torch.Tensor]  # torch's exp_avg and exp_avg_sq before the step

    @property
    def where(self) -> str:
        return f"after step {self.number} on {self.problem.what}"


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
        watched = {"param": ours} | (_state_tensors(state) if number >= 2 else {})
        verdict = (
            verdict
            or _changed_grad(given, step)
            or _new_memory(ours, step)
            or _state_verdict(state, opt.state[theirs], kept, step)
            or _param_verdict(ours.detach(), theirs.detach(), state, step, writes)
            or _writers_verdict(writes, watched, step)
        )
        if verdict is not None:
            return verdict
        if number == 1:
            first_writes = _writers_verdict(writes, _state_tensors(state), step)
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


def _changed_grad(grad: torch.Tensor, step: Step) -> Verdict | None:
    if torch.equal(grad, step.grad):
        return None
    return failed(
        f"{step.where} the gradient you were given has changed: your step wrote into it "
        "(grad.mul_(grad)? grad.pow_(2)?). Adam reads grad, never writes it: a second "
        "optimizer, a gradient check or the next accumulation reads the same tensor. Square "
        "it into a new tensor, or let addcmul_(grad, grad, ...) do the product."
    )


def _new_memory(param: torch.Tensor, step: Step) -> Verdict | None:
    if (param.data_ptr(), param.stride()) == step.memory:
        return None
    return failed(
        f"{step.where} the parameter has new memory: `param.data = ...` swaps in another "
        "tensor instead of writing into the parameter's own memory, so anything else holding "
        "it (a view, a tied weight) never sees the write. Write in place: param.addcdiv_(...)."
    )


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
            or _moment_values(key, mine, expected[key], step)
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


def _moment_slips(key: str, want: torch.Tensor, step: Step) -> tuple[dict, str, str]:
    """A running mean's known slips (what each makes of it), torch's op and the usual other."""
    (beta1, beta2), prev, g = step.problem.betas, step.moments[key], step.grad
    if key == "exp_avg":
        return (
            {
                f"{key} is what betas {DEFAULT_BETAS} give": prev * 0.9 + 0.1 * g,
                f"the weights are swapped: {key} = beta1 * grad + (1 - beta1) * {key}": (
                    prev * (1 - beta1) + beta1 * g
                ),
                f"{key} decays with beta2; the first moment uses beta1": (
                    prev * beta2 + (1 - beta2) * g
                ),
            },
            "exp_avg.lerp_(grad, 1 - beta1), one op",
            "beta1 * exp_avg + (1 - beta1) * grad written with mul_ and add_",
        )
    return (
        {
            f"{key} holds its own square root: sqrt_() wrote into the running mean; take "
            "exp_avg_sq.sqrt() into a new tensor for the denominator": want.sqrt(),
            f"{key} averages grad, not grad * grad": prev * beta2 + (1 - beta2) * g,
            f"{key} is what betas {DEFAULT_BETAS} give": prev * 0.999 + 0.001 * g * g,
            f"the weights are swapped: {key} = beta2 * grad**2 + (1 - beta2) * {key}": (
                prev * (1 - beta2) + beta2 * g * g
            ),
            f"{key} decays with beta1; the second moment uses beta2": (
                prev * beta1 + (1 - beta1) * g * g
            ),
            f"{key} decays after the new term is added: mul_(beta2) first, then addcmul_, or "
            "the new term decays too": (prev + (1 - beta2) * g * g) * beta2,
        },
        TORCH_WRITES[key][1],
        "(1 - beta2) * grad * grad added with add_",
    )


def _moment_values(key: str, mine: torch.Tensor, want: torch.Tensor, step: Step):
    if torch.equal(mine, want):
        return None
    slips, torch_op, other = _moment_slips(key, want, step)
    diff = (mine - want).abs().max().item()
    shown = first_difference(key, mine, want)
    prev = step.moments[key]
    if torch.equal(mine, prev) and not torch.equal(want, prev):
        return failed(
            f"{step.where}, state[{key!r}] did not change on this step, though torch's did: "
            "every call is one step, and every step updates both running means",
            *shown,
        )
    if _close(mine, want):
        return failed(
            f"{step.where}, state[{key!r}] is right to rounding but not bitwise (max diff "
            f"{diff:.3g}). Bitwise like torch means torch's own operations: torch computes it "
            f"with {torch_op}; {other} is the same formula, rounded differently in the last bit.",
            *shown,
        )
    for slip, value in slips.items():
        if not _close(value, want) and _close(mine, value):
            if "betas (" in slip:
                slip += f", not the betas you were given {step.problem.betas}: use `betas`"
            return failed(f"{step.where}, state[{key!r}] differs: {slip}", *shown)
    start = " and, on this first step, what it starts from" if step.number == 1 else ""
    return failed(
        f"{step.where}, state[{key!r}] differs (max diff {diff:.3g}) from torch's running "
        f"mean: check its formula, beta, the tensor it averages{start}",
        *shown,
    )


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal to float32 rounding (a few last bits), not to a formula's difference."""
    return torch.allclose(a, b, rtol=1e-5, atol=0.0)


def first_difference(name: str, mine: torch.Tensor, want: torch.Tensor) -> tuple[str, str]:
    """The first element where two tensors differ, with every digit float32 has (a last-bit
    difference prints identically at six digits)."""
    index = tuple(int(i) for i in (mine != want).nonzero()[0])
    where = f"{name}[{', '.join(map(str, index))}]"
    return f"{where} = {mine[index].item():.9g}", f"{where} = {want[index].item():.9g}"


def _slips(problem: Problem, t: int, grad: torch.Tensor) -> dict[str, Callable]:
    """Mistakes in the parameter update, as the update each would make from the moments."""
    lr, eps = problem.lr, problem.eps
    (c1, c2), (n1, n2), (f1, f2) = (bias_corrections(*problem.betas, n) for n in (t, t + 1, 1))
    return {
        "the bias corrections are missing": lambda m, v: -lr * m / (v.sqrt() + eps),
        "only 1 - beta1**t is applied; also divide sqrt(v) by sqrt(1 - beta2**t)": (
            lambda m, v: -lr / c1 * m / (v.sqrt() + eps)
        ),
        "only 1 - beta2**t is applied; also divide lr by 1 - beta1**t": (
            lambda m, v: -lr * m / ((v / c2).sqrt() + eps)
        ),
        "eps is added before the bias correction: torch divides sqrt(v) by sqrt(1 - beta2**t) "
        "first, then adds eps": (lambda m, v: -lr / c1 * m / ((v.sqrt() + eps) / c2**0.5)),
        "the numerator is grad: Adam divides exp_avg, the running mean, not the gradient": (
            lambda m, v: -lr / c1 * grad / ((v / c2).sqrt() + eps)
        ),
        "eps is inside the square root: Adam adds eps after the sqrt": (
            lambda m, v: -lr / c1 * m / (v / c2 + eps).sqrt()
        ),
        "the sqrt is missing: divide by sqrt(v) / sqrt(1 - beta2**t) + eps": (
            lambda m, v: -lr / c1 * m / (v / c2**0.5 + eps)
        ),
        "the sqrt is missing: divide by sqrt(v_hat) + eps, not v_hat + eps": (
            lambda m, v: -lr / c1 * m / (v / c2 + eps)
        ),
        "sqrt(v) is divided by 1 - beta2**t itself; the correction of a square root is the "
        "square root of the correction, sqrt(1 - beta2**t)": (
            lambda m, v: -lr / c1 * m / (v.sqrt() / c2 + eps)
        ),
        "the sign is flipped: Adam steps against m": (
            lambda m, v: lr / c1 * m / ((v / c2).sqrt() + eps)
        ),
        f"your step ignored lr (= {lr} here) and used {DEFAULT_LR}": (
            lambda m, v: -DEFAULT_LR / c1 * m / ((v / c2).sqrt() + eps)
        ),
        f"your step ignored eps (= {eps:g} here) and used {DEFAULT_EPS:g}": (
            lambda m, v: -lr / c1 * m / ((v / c2).sqrt() + DEFAULT_EPS)
        ),
        "the bias corrections stay at their first step's: 1 - beta**t changes with every step t": (
            lambda m, v: -lr / f1 * m / ((v / f2).sqrt() + eps)
        ),
        "the bias corrections use step t + 1: the first step is t = 1": (
            lambda m, v: -lr / n1 * m / ((v / n2).sqrt() + eps)
        ),
    }


def _closest_slip(update: torch.Tensor, state: State, step: Step) -> str | None:
    """The slip whose update is closest to the learner's, or None when the right formula is
    closer than every slip (then the learner's maths is right, only its order differs) or the
    closest slip is not close (a mistake of another kind: naming a slip would mislead)."""
    problem = step.problem
    c1, c2 = bias_corrections(*problem.betas, step.number)
    m, v = state["exp_avg"], state["exp_avg_sq"]
    right = -problem.lr / c1 * m / ((v / c2).sqrt() + problem.eps)
    formulas = {None: right} | {
        slip: formula(m, v) for slip, formula in _slips(problem, step.number, step.grad).items()
    }
    distance = {k: (update - f).abs().max().item() for k, f in formulas.items()}
    closest = min(distance, key=lambda k: distance[k])
    if closest is None:
        return None
    apart = (formulas[closest] - right).abs().max().item()  # how far the slip is from Adam
    return closest if distance[closest] <= apart / 10 else None


def _param_verdict(
    mine: torch.Tensor, want: torch.Tensor, state: State, step: Step, writes: Writes
) -> Verdict | None:
    if torch.equal(mine, want):
        return None
    if torch.equal(mine, step.param) and not torch.equal(want, step.param):
        copy = (
            ""
            if mine.is_contiguous()
            else "; or `param.reshape(-1)`, `.contiguous()`, `.flatten()` of this non-contiguous "
            "parameter is a copy, and a write into a copy never reaches the parameter"
        )
        return failed(
            f"{step.where} the parameter you were given did not change at all, though torch's "
            "did: your update went into another tensor. If you wrote `param = param - ...`, the "
            f"new tensor was bound to the local name `param`{copy}. A lost write: this course's "
            "theme. Update the parameter itself, in place: param.addcdiv_(...).",
            "unchanged",
            "updated in place",
        )
    diff = (mine - want).abs().max().item()
    shown = first_difference("param", mine, want)
    slip = _closest_slip(mine - step.param, state, step)
    if slip is not None:
        return failed(
            f"{step.where} the moments match but the parameter differs (max diff {diff:.3g}): "
            f"your update matches a known slip: {slip}",
            *shown,
        )
    if _close(mine, want):
        return failed(
            f"{step.where} your parameter is right to rounding but not bitwise (max diff "
            f"{diff:.2g}). {_rounding_cause(writes.into(mine), state)}",
            *shown,
        )
    return failed(
        f"{step.where} the moments match but the parameter differs (max diff {diff:.3g}): check "
        "the bias corrections 1 - beta**step, the sqrt in the denominator, eps and the sign",
        *shown,
    )


def _rounding_cause(ops: list[str], state: State) -> str:
    """Why a right formula is not torch's bits: the op that wrote the parameter when it is not
    torch's, else the order of the operations (and a step count kept in a tensor)."""
    foreign = sorted(set(ops) - {"addcdiv"})
    if foreign:
        return (
            f"Your step wrote the parameter with {', '.join(op + '_' for op in foreign)}; "
            f"torch's writes it with one {TORCH_WRITES['param'][1]}, and bitwise like torch "
            "means torch's own operations: a float is rounded after every one."
        )
    tensor_count = (
        "; and torch reads state['step'] as a Python number (step.item()): 1 - beta**t "
        "in a float32 tensor rounds differently too."
    )
    return (
        "Bitwise like torch means torch's own operations in torch's order: the sqrt, the "
        "division by sqrt(1 - beta2**t), then add_(eps): denom = (exp_avg_sq.sqrt() / "
        "sqrt(1 - beta2**t)).add_(eps), and one param.addcdiv_(exp_avg, denom, "
        "value=-lr / (1 - beta1**t)). m_hat and v_hat divided first is the same formula "
        "rounded differently; eps added before the division is another formula, here too "
        "close to tell apart" + (tensor_count if isinstance(state["step"], torch.Tensor) else ".")
    )


def _state_tensors(state: State) -> dict[str, torch.Tensor]:
    return {key: state[key] for key in STATE_KEYS}


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
        hint="Create the state with torch.zeros_like(param, memory_format=torch.preserve_format) "
        "and count steps from 1. Then exp_avg.lerp_(grad, 1 - beta1); "
        "exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2); "
        "denom = (exp_avg_sq.sqrt() / sqrt(1 - beta2**t)).add_(eps); "
        "param.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**t)).",
        minutes=20,
    )
)
