"""03.adam_step's hidden problems, and what a wrong value on one of them says.

The problems vary every parameter the prompt names: layouts from 1-D to 3-D, a gradient laid
out unlike the parameter, exact zeros and tiny gradients (where eps matters), lr, betas, eps and
the number of steps. A running mean or a parameter that differs from torch's is compared with
what each known slip would have made of the same inputs (betas typed from memory, weights
swapped, eps inside the sqrt, a missing bias correction...): the closest names the mistake. A
value right to float32 rounding but not to the bit is a right formula run with other ops or in
another order, and is told torch's. Each message shows the first differing element, all digits.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from course.adam.scratch import State, bias_corrections
from course.exercises import Verdict, failed
from course.layout.named import laid_out

DEFAULT_BETAS = (0.9, 0.999)  # torch.optim.Adam's, which a learner may type instead of `betas`
DEFAULT_LR, DEFAULT_EPS = 1e-3, 1e-8
# The ops torch's single-tensor step writes each tensor with (base names, as common.Writes logs).
TORCH_WRITES = {
    "param": (("addcdiv",), "param.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**t))"),
    "exp_avg": (("lerp",), "exp_avg.lerp_(grad, 1 - beta1)"),
    "exp_avg_sq": (
        ("mul", "addcmul"),
        "exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)",
    ),
}


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


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal to float32 rounding (a few last bits), not to a formula's difference."""
    return torch.allclose(a, b, rtol=1e-5, atol=0.0)


def first_difference(name: str, mine: torch.Tensor, want: torch.Tensor) -> tuple[str, str]:
    """The first element where two tensors differ, with every digit float32 has (a last-bit
    difference prints identically at six digits)."""
    index = tuple(int(i) for i in (mine != want).nonzero()[0])
    where = f"{name}[{', '.join(map(str, index))}]"
    return f"{where} = {mine[index].item():.9g}", f"{where} = {want[index].item():.9g}"


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


def moment_verdict(key: str, mine: torch.Tensor, want: torch.Tensor, step: Step):
    """What is wrong with a running mean that is not torch's to the bit (None when it is)."""
    if torch.equal(mine, want):
        return None
    slips, torch_op, other = _moment_slips(key, want, step)
    diff = (mine - want).abs().max().item()
    shown, prev = first_difference(key, mine, want), step.moments[key]
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


def _update_slips(step: Step, m: torch.Tensor, v: torch.Tensor) -> dict[str, torch.Tensor]:
    """Mistakes in the parameter update, as the update each would make from the moments."""
    lr, eps, t, grad = step.problem.lr, step.problem.eps, step.number, step.grad
    (c1, c2), (n1, n2), (f1, f2) = (bias_corrections(*step.problem.betas, n) for n in (t, t + 1, 1))
    return {
        "the bias corrections are missing": -lr * m / (v.sqrt() + eps),
        "only 1 - beta1**t is applied; also divide sqrt(v) by sqrt(1 - beta2**t)": (
            -lr / c1 * m / (v.sqrt() + eps)
        ),
        "only 1 - beta2**t is applied; also divide lr by 1 - beta1**t": (
            -lr * m / ((v / c2).sqrt() + eps)
        ),
        "eps is added before the bias correction: torch divides sqrt(v) by sqrt(1 - beta2**t) "
        "first, then adds eps": -lr / c1 * m / ((v.sqrt() + eps) / c2**0.5),
        "the numerator is grad: Adam divides exp_avg, the running mean, not the gradient": (
            -lr / c1 * grad / ((v / c2).sqrt() + eps)
        ),
        "eps is inside the square root: Adam adds eps after the sqrt": (
            -lr / c1 * m / (v / c2 + eps).sqrt()
        ),
        "the sqrt is missing: divide by sqrt(v) / sqrt(1 - beta2**t) + eps": (
            -lr / c1 * m / (v / c2**0.5 + eps)
        ),
        "the sqrt is missing: divide by sqrt(v_hat) + eps, not v_hat + eps": (
            -lr / c1 * m / (v / c2 + eps)
        ),
        "sqrt(v) is divided by 1 - beta2**t itself; the correction of a square root is the "
        "square root of the correction, sqrt(1 - beta2**t)": -lr / c1 * m / (v.sqrt() / c2 + eps),
        "the sign is flipped: Adam steps against m": lr / c1 * m / ((v / c2).sqrt() + eps),
        f"your step ignored lr (= {lr} here) and used {DEFAULT_LR}": (
            -DEFAULT_LR / c1 * m / ((v / c2).sqrt() + eps)
        ),
        f"your step ignored eps (= {eps:g} here) and used {DEFAULT_EPS:g}": (
            -lr / c1 * m / ((v / c2).sqrt() + DEFAULT_EPS)
        ),
        "the bias corrections stay at their first step's: 1 - beta**t changes with every step t": (
            -lr / f1 * m / ((v / f2).sqrt() + eps)
        ),
        "the bias corrections use step t + 1: the first step is t = 1": (
            -lr / n1 * m / ((v / n2).sqrt() + eps)
        ),
    }


def _closest_slip(update: torch.Tensor, state: State, step: Step) -> str | None:
    """The slip whose update is closest to the learner's, or None when the right formula is
    closer than every slip (then the learner's maths is right, only its order differs) or the
    closest slip is not close (a mistake of another kind: naming a slip would mislead)."""
    c1, c2 = bias_corrections(*step.problem.betas, step.number)
    m, v = state["exp_avg"], state["exp_avg_sq"]
    right = -step.problem.lr / c1 * m / ((v / c2).sqrt() + step.problem.eps)
    formulas = {None: right} | _update_slips(step, m, v)
    distance = {k: (update - f).abs().max().item() for k, f in formulas.items()}
    closest = min(distance, key=lambda k: distance[k])
    if closest is None:
        return None
    apart = (formulas[closest] - right).abs().max().item()  # how far the slip is from Adam
    return closest if distance[closest] <= apart / 10 else None


def param_verdict(
    mine: torch.Tensor, want: torch.Tensor, state: State, step: Step, ops: list[str]
) -> Verdict | None:
    """What is wrong with a parameter that is not torch's to the bit, its moments being right
    (None when it is); `ops` wrote into it."""
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
            f"{diff:.2g}). {_rounding_cause(ops, state)}",
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
