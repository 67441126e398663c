"""03.adam_step's test data: the notebook's step, right steps written other ways, and the wrong
steps a learner writes, each keyed by its flaw with the words its feedback must contain.

Most wrong steps are one step with one mistake (`flawed_step(flaw)`): the flaw names the
mistake, and the step is otherwise the reference, so the feedback can only be about that flaw.
"""

from __future__ import annotations

import math

import torch

from course.adam import scratch
from course.adam.scratch import STATE_KEYS, State, bias_corrections
from tests.corpus import Corpus

DEFAULT_BETAS = (0.9, 0.999)  # torch.optim.Adam's, which a learner may type instead of `betas`
DEFAULT_LR, DEFAULT_EPS = 1e-3, 1e-8


def reference():
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


def flawed_step(flaw: str):
    """Adam as a learner writes it, with one mistake (`flaw`); "" is no mistake."""

    def my_step(param, grad, state, lr, betas, eps):
        lr = DEFAULT_LR if flaw == "lr ignored" else lr
        eps = DEFAULT_EPS if flaw == "eps ignored" else eps
        beta1, beta2 = DEFAULT_BETAS if flaw == "betas ignored" else betas
        count = "t" if flaw == "count under another key" else "step"
        if not state:
            state[count] = 0
            for key in STATE_KEYS:  # torch.zeros(shape) is always contiguous
                contiguous = flaw == "contiguous state"
                like = grad if flaw == "state like grad" else param
                state[key] = torch.zeros(param.shape) if contiguous else torch.zeros_like(like)
                if flaw == "state from ones":  # "a running mean of zeros would divide by 0"
                    state[key] = torch.ones_like(param)
        state[count] += 1
        if flaw == "first step only" and state[count] > 1:
            return  # the step was tried once, on one call
        t = 1 if flaw == "first step's corrections" else state[count]
        c1, c2 = bias_corrections(beta1, beta2, t)
        if flaw == "no bias correction":
            c1 = c2 = 1.0
        _moments(flaw, state, grad, beta1, beta2)
        denom = _denominator(flaw, state["exp_avg_sq"], c2, eps)
        numerator = grad if flaw == "grad in the numerator" else state["exp_avg"]
        _update(flaw, param, numerator, denom, lr / c1, c2, eps, state)

    return my_step


def _denominator(flaw: str, v: torch.Tensor, c2: float, eps: float) -> torch.Tensor:
    """sqrt(v) / sqrt(1 - beta2**t) + eps, as the flawed step writes it."""
    if flaw == "eps inside the sqrt":
        return (v / c2 + eps).sqrt()
    if flaw == "eps before the division":
        return v.sqrt().add_(eps) / c2**0.5
    if flaw == "sqrt_ into the state":
        return (v.sqrt_() / c2**0.5).add_(eps)
    if flaw == "correction not square-rooted":
        return (v.sqrt() / c2).add_(eps)
    root = v if flaw == "no sqrt" else v.sqrt()
    return (root / c2**0.5).add_(eps)


def _update(flaw, param, m, denom, size, c2, eps, state) -> None:
    """The parameter update, as the flawed step writes it (`size` is lr / (1 - beta1**t))."""
    if flaw == "reordered":  # m_hat and v_hat first: Adam's maths, another rounding
        v_hat = state["exp_avg_sq"] / c2
        param -= size * m / (v_hat.sqrt() + eps)
    elif flaw == "rebinding":
        param = param - size * m / denom  # noqa: F841 (never written back)
    elif flaw == "data swap":
        param.data = param.addcdiv(m, denom, value=-size)
    elif flaw == "sub_" or (flaw == "sub_ on step 1" and state["step"] == 1):
        param.sub_(size * m / denom)  # the same bits on the CPU, another op
    elif flaw == "into a reshape":  # a copy when the parameter is not contiguous
        param.reshape(-1).addcdiv_(m.reshape(-1), denom.reshape(-1), value=-size)
    elif flaw == "contiguous, then copied back":
        work = param.contiguous()
        work.addcdiv_(m, denom, value=-size)
        param.copy_(work)
    elif flaw == "float64, copied back":
        param.copy_(param.double().addcdiv(m.double(), denom.double(), value=-size))
    else:
        param.addcdiv_(m, denom, value=-size)


def _moments(flaw: str, state: State, grad: torch.Tensor, beta1: float, beta2: float) -> None:
    """The running means as the flawed step writes them."""
    m, v = state["exp_avg"], state["exp_avg_sq"]
    if flaw == "add_ on step 1" and state["step"] == 1:  # "from zeros, the mean is (1 - b) g"
        m.add_((1 - beta1) * grad)
        v.add_((1 - beta2) * grad * grad)
        return
    if flaw == "mul_ and add_":  # the markdown's formula, op by op
        m.mul_(beta1).add_(grad, alpha=1 - beta1)
    elif flaw == "new tensors":
        state["exp_avg"] = torch.lerp(m, grad, 1 - beta1)  # the same values, in a new tensor
    elif flaw == "copy_ of lerp":
        m.copy_(torch.lerp(m, grad, 1 - beta1))  # in place, the same bits, not torch's op
    else:
        m.lerp_(grad, 1 - beta1)
    if flaw == "add_ of the square":
        v.mul_(beta2).add_((1 - beta2) * grad * grad)
    elif flaw == "decay after":
        v.addcmul_(grad, grad, value=1 - beta2).mul_(beta2)
    elif flaw == "squares grad in place":
        v.mul_(beta2).add_(grad.mul_(grad), alpha=1 - beta2)
    else:
        v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)


def _counts_after_use():
    """The step count read before it is incremented: t = 0 on the first step."""

    def my_step(param, grad, state, lr, betas, eps):
        beta1, beta2 = betas
        if not state:
            zeros = torch.zeros_like(param)
            state.update(step=0, exp_avg=zeros.clone(), exp_avg_sq=zeros.clone())
        t = state["step"]
        state["step"] += 1
        state["exp_avg"].lerp_(grad, 1 - beta1)
        state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = (state["exp_avg_sq"].sqrt() / (1 - beta2**t) ** 0.5).add_(eps)
        param.addcdiv_(state["exp_avg"], denom, value=-lr / (1 - beta1**t))

    return my_step


def _torch_adam_inside():
    """torch's own Adam, kept in the state and stepped: equal to torch, because it is torch."""

    def my_step(param, grad, state, lr, betas, eps):
        if "optimizer" not in state:
            state["optimizer"] = torch.optim.Adam([param], lr=lr, betas=betas, eps=eps)
        param.grad = grad
        state["optimizer"].step()
        state.update(state["optimizer"].state[param])

    return my_step


def counting_in_a_tensor(item: bool):
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


def _two_d_only():
    """A step written for weight matrices: it unpacks the shape, and a bias has one dim."""
    step = reference()

    def my_step(param, grad, state, lr, betas, eps):
        rows, cols = param.shape
        step(param, grad, state, lr, betas, eps)

    return my_step


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


def _flaw(flaw: str, cause: str) -> tuple:
    return (lambda: flawed_step(flaw), cause)


CORPORA = (
    Corpus(
        "03.adam_step",
        reference,
        wrong={
            "no bias correction": _flaw("no bias correction", "bias corrections are missing"),
            "no sqrt": _flaw("no sqrt", "sqrt is missing"),
            "contiguous state": _flaw("contiguous state", "preserve_format"),
            "eps inside the sqrt": _flaw("eps inside the sqrt", "eps is inside the square root"),
            "rebinding": _flaw("rebinding", "bound to the local name `param`"),
            "betas ignored": _flaw(
                "betas ignored",
                "betas (0.9, 0.999) give, not the betas you were given (0.5, 0.99)",
            ),
            "m_hat and v_hat first, then param -= ...": _flaw(
                "reordered", "addcdiv_(exp_avg, denom"
            ),
            "the markdown's formula with mul_ and add_": _flaw(
                "mul_ and add_", "exp_avg.lerp_(grad, 1 - beta1)"
            ),
            "(1 - beta2) * grad * grad with add_": _flaw(
                "add_ of the square", "addcmul_(grad, grad, value=1 - beta2)"
            ),
            "state['exp_avg'] = torch.lerp(...)": _flaw("new tensors", "is a new tensor"),
            "the step count under another key": _flaw(
                "count under another key", "(yours holds 't')"
            ),
            "lr ignored": _flaw("lr ignored", "ignored lr (= 0.02 here)"),
            "eps ignored": _flaw("eps ignored", "ignored eps (= 0.001 here)"),
            "t read before it is incremented": (_counts_after_use, "Count steps from 1"),
            "the course's own step": (
                lambda: scratch.adam_step,
                "course.adam.scratch.adam_step, the course's own Adam",
            ),
            "torch's Adam inside": (_torch_adam_inside, "torch's own Adam"),
            "param.data = ...": _flaw("data swap", "new memory"),
            "grad squared in place": _flaw(
                "squares grad in place", "the gradient you were given has changed"
            ),
            "the step tried on the first call only": _flaw(
                "first step only", "did not change on this step"
            ),
            "eps before the division": _flaw(
                "eps before the division", "eps added before the division"
            ),
            "param.sub_: torch's bits on the CPU, not torch's op": _flaw(
                "sub_", "wrote the parameter with sub_"
            ),
            "exp_avg.copy_(torch.lerp(...))": _flaw(
                "copy_ of lerp", "wrote state['exp_avg'] with copy_"
            ),
            "param.reshape(-1).addcdiv_ on a transposed parameter": _flaw(
                "into a reshape", "is a copy"
            ),
            "exp_avg_sq.sqrt_()": _flaw("sqrt_ into the state", "holds its own square root"),
            "grad in the numerator": _flaw("grad in the numerator", "the numerator is grad"),
            ".contiguous(), addcdiv_, copy_ back": _flaw(
                "contiguous, then copied back", "wrote the parameter with copy_"
            ),
            "computed in float64, copied back": _flaw(
                "float64, copied back", "wrote the parameter with copy_"
            ),
            "torch.zeros_like(grad)": _flaw("state like grad", "follows the gradient's layout"),
            "1 - beta**1 on every step": _flaw(
                "first step's corrections", "stay at their first step's"
            ),
            "torch.ones_like(param)": _flaw(
                "state from ones", "on this first step, what it starts from"
            ),
            "addcmul_, then mul_(beta2)": _flaw(
                "decay after", "decays after the new term is added"
            ),
            "sqrt(v) / (1 - beta2**t)": _flaw(
                "correction not square-rooted", "the square root of the correction"
            ),
            "sub_ on step 1: 'the first step is special'": _flaw(
                "sub_ on step 1",
                "after step 1 on a contiguous parameter your numbers are torch's to the bit",
            ),
            "add_ on step 1: the state's first step, from zeros": _flaw(
                "add_ on step 1",
                "wrote state['exp_avg'] with add_, where torch's step runs "
                "exp_avg.lerp_(grad, 1 - beta1), on the first step too",
            ),
            "state['step'] a float32 tensor, used as is": (
                lambda: counting_in_a_tensor(item=False),
                "step.item()",
            ),
            "written for weight matrices only": (
                _two_d_only,
                "on step 1 of a bias (1-D), lr 0.05, eps 1e-6 your step raised ValueError",
            ),
        },
        right={
            "as the prompt asks, zeros_like preserving the layout": lambda: flawed_step(""),
            "state['step'] a float32 tensor, read with item()": lambda: counting_in_a_tensor(
                item=True
            ),
            "torch's ops with out=": lambda: _spelled("out="),
            "torch's foreach ops": lambda: _spelled("foreach"),
            "state from empty_like().zero_(), math.sqrt, unbound methods": (
                lambda: _written_another_way("zero_")
            ),
            "state from empty_like().fill_(0.0)": lambda: _written_another_way("fill_"),
        },
    ),
)
