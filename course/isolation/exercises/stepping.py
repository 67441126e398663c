"""02.sgd_step and 02.encoder_moves: one step by hand, and which optimizer moves the encoder.

A manual step is checked on the parameter objects themselves, not on the list handed in, so a
write that never reaches them (a rebound name, a replaced list entry or slice, `p.data = ...`)
is caught and named: the lost write the course is about must not pass its own checker.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from course import emps
from course.exercises import (
    Exercise,
    Verdict,
    failed,
    passed,
    register,
)
from course.isolation import experiments
from course.isolation.exercises.common import (
    LATER,
    MADE_UP,
    SMALL,
    Variant,
    require_bool,
    stepped_other,
    stepped_outside,
    unprepared_step,
    watch_backward,
)
from course.isolation.experiments import ENCODER, Bench
from course.layout.named import laid_out

# ---- 02.sgd_step -----------------------------------------------------------------------------


@dataclass
class SgdCase:
    """Parameters (with gradients) handed to the learner's step, and what must become of them."""

    what: str
    params: list[torch.nn.Parameter]
    lr: float

    def __post_init__(self) -> None:
        self.start = [p.detach().cpu().clone() for p in self.params]
        self.grads = [p.grad.detach().cpu().clone() for p in self.params]
        self.memory = [(p.data_ptr(), p.stride()) for p in self.params]
        self.want = self._torch_sgd()

    def _torch_sgd(self) -> list[torch.Tensor]:
        twins = [torch.nn.Parameter(p.detach().clone()) for p in self.params]
        for twin, p in zip(twins, self.params, strict=True):
            twin.grad = p.grad.clone()
        torch.optim.SGD(twins, lr=self.lr).step()
        return [twin.detach().cpu() for twin in twins]


def _sgd_cases() -> list[SgdCase]:
    """Contiguous CPU parameters first: a write that lands there and is lost on a later case
    went into a copy (`.cpu()` on the device, `.contiguous()` of a transposed weight)."""
    gen = torch.Generator().manual_seed(2)
    cases = []
    for what, layout, device, lr, shapes in (
        (
            "a contiguous weight and a bias on the CPU, lr 0.25",
            "contiguous",
            "cpu",
            0.25,
            ((6, 4), (5,)),
        ),
        (
            "a weight and a bias on the emulated device",
            "transposed",
            emps.DEVICE,
            1e-3,
            ((6, 4), (5,)),
        ),
        ("three parameters on the CPU, lr 0.1", "transposed", "cpu", 0.1, ((3, 7), (7,), (2, 3))),
    ):
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


def _run_sgd(fn: Callable, case: SgdCase, given: list) -> tuple[object, Verdict | None]:
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
    return result, None


COPY_CAUSE = (
    "your write went into a copy. `.contiguous()` and `.reshape()` of a non-contiguous tensor, "
    "`.cpu()` of one on another device and `.clone()` return new tensors, and a write into them "
    "never reaches the parameter: a lost write, the theme of this course."
)


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
    expected = "p - lr * grad, written into p"
    if len(unchanged) < len(now):
        i = unchanged[0]
        noncontiguous = {j for j, p in enumerate(case.params) if not p.is_contiguous()}
        if set(unchanged) == noncontiguous:
            return failed(
                f"on {case.what} the non-contiguous parameter {i} (shape {list(now[i].shape)}, "
                f"stride {case.params[i].stride()}) is unchanged after your step and the "
                f"contiguous ones moved: {COPY_CAUSE} Write into p itself (`p -= ...`).",
                "unchanged",
                expected,
            )
        return failed(
            f"on {case.what} parameter {i} (shape {list(now[i].shape)}) is unchanged after "
            "your step: update every parameter in the list, biases too",
            "unchanged",
            expected,
        )
    replaced = len(given) != len(case.params) or any(
        g is not p for g, p in zip(given, case.params, strict=False)
    )
    if replaced:
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
        expected,
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
    for i, (p, start, grad, want) in enumerate(
        zip(case.params, case.start, case.grads, case.want, strict=True)
    ):
        now = p.detach().cpu()
        if torch.allclose(now, want, rtol=1e-6, atol=1e-7):
            continue
        gap = (now - want).abs().max().item()
        return failed(
            f"on {case.what} parameter {i} differs from torch.optim.SGD's step "
            f"(max diff {gap:.3g}): {_step_cause(case, start, now, grad)}"
        )
    return None


def _step_cause(case: SgdCase, start: torch.Tensor, now: torch.Tensor, grad: torch.Tensor) -> str:
    """What the step did instead, when it moved every element by one multiple of its gradient."""
    rate = _rate(start, now, grad)
    if rate is None:
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


def _rate(start: torch.Tensor, now: torch.Tensor, grad: torch.Tensor) -> float | None:
    """(start - now) / grad when it is the same for every element with a gradient, else None."""
    moving = grad != 0
    if not moving.any():
        return None
    rates = ((start - now)[moving] / grad[moving]).double()
    rate = rates.mean().item()
    return rate if torch.allclose(rates, torch.full_like(rates, rate), rtol=1e-3) else None


def _check_sgd_step(fn: Callable) -> Verdict:
    landed = False  # whether the step reached an earlier case's parameters
    for case in _sgd_cases():
        given = list(case.params)
        result, verdict = _run_sgd(fn, case, given)
        if verdict is None and any(
            p.grad is None or not torch.equal(p.grad.detach().cpu(), g)
            for p, g in zip(case.params, case.grads, strict=True)
        ):
            verdict = failed(
                f"on {case.what} your step changed p.grad, an input: the gradient must stay "
                "as backward left it (a second optimizer, or a check, reads it; clearing it is "
                "zero_grad's job). Write the update into the parameter only."
            )
        verdict = verdict or _lost_write(case, given, result, landed) or _swapped_memory(case)
        verdict = verdict or _wrong_values(case)
        if verdict is not None:
            return verdict
        landed = True
    return passed(
        "an in-place SGD step, equal to torch.optim.SGD's, on every parameter and device."
    )


def _reference_sgd_step():
    def sgd_step(params, lr):
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad

    return sgd_step


def _rebinding_sgd_step():
    def sgd_step(params, lr):
        with torch.no_grad():
            for p in params:
                p = p - lr * p.grad  # noqa: PLW2901 (the wrong answer: a rebinding)

    return sgd_step


def _list_entry_sgd_step():
    def sgd_step(params, lr):
        with torch.no_grad():
            for i, p in enumerate(params):
                params[i] = p - lr * p.grad

    return sgd_step


def _slice_sgd_step():
    def sgd_step(params, lr):
        with torch.no_grad():
            params[:] = [p - lr * p.grad for p in params]

    return sgd_step


def _data_sgd_step():
    def sgd_step(params, lr):
        for p in params:
            p.data = p.data - lr * p.grad

    return sgd_step


def _returning_sgd_step():
    def sgd_step(params, lr):
        with torch.no_grad():
            return [p - lr * p.grad for p in params]

    return sgd_step


def _weights_only_sgd_step():
    def sgd_step(params, lr):
        with torch.no_grad():
            for p in params:
                if p.dim() == 2:  # "the weights": the biases are skipped
                    p -= lr * p.grad

    return sgd_step


def _grad_sgd_step():
    def sgd_step(params, lr):
        with torch.no_grad():
            for p in params:
                p.grad.mul_(lr)  # scales the gradient in place: an input written into
                p.sub_(p.grad)

    return sgd_step


def _copy_sgd_step(copy: Callable):
    """A step written into `copy(p)`: lands only where the copy is the parameter itself."""

    def sgd_step(params, lr):
        with torch.no_grad():
            for p in params:
                copy(p).sub_(lr * p.grad.to(copy(p).device))

    return sgd_step


def _scaled_sgd_step(scale: Callable[[float], float]):
    """p -= scale(lr) * grad: a learning rate written in, or used twice."""

    def sgd_step(params, lr):
        with torch.no_grad():
            for p in params:
                p -= scale(lr) * p.grad

    return sgd_step


def _half_sgd_step():
    def sgd_step(params, lr):
        with torch.no_grad():
            for p in params:
                p -= (lr * p.grad).half().to(p.dtype)  # rounded on the way

    return sgd_step


def _torch_sgd_step():
    def sgd_step(params, lr):
        torch.optim.SGD(params, lr=lr).step()

    return sgd_step


def _sgd_without_no_grad():
    def sgd_step(params, lr):
        for p in params:
            p.sub_(lr * p.grad)

    return sgd_step


register(
    Exercise(
        name="02.sgd_step",
        prompt="Write sgd_step(params, lr): one plain SGD step, p <- p - lr * p.grad, in place, "
        "for every parameter in the list (without torch.optim).",
        checker=_check_sgd_step,
        hint="Inside `with torch.no_grad():`, update each tensor in place (`p -= ...` or "
        "`p.sub_(...)`): a new tensor bound to a name, or put into the list, is not the "
        "model's parameter.",
        reference=_reference_sgd_step,
        wrong_answers=(
            _rebinding_sgd_step,
            _list_entry_sgd_step,
            _slice_sgd_step,
            _data_sgd_step,
            _returning_sgd_step,
            _weights_only_sgd_step,
            _grad_sgd_step,
            _torch_sgd_step,
            _sgd_without_no_grad,
            lambda: lambda params, lr: [p.data.sub_(p.grad) for p in params],
            lambda: lambda params, lr: [p.data.add_(lr * p.grad) for p in params],
            lambda: _copy_sgd_step(torch.Tensor.contiguous),
            lambda: _copy_sgd_step(lambda p: p.detach().cpu()),
            lambda: _copy_sgd_step(torch.Tensor.clone),
            lambda: _scaled_sgd_step(lambda lr: 1e-3),  # the notebook's lr, written in
            lambda: _scaled_sgd_step(lambda lr: 2 * lr),
            lambda: _scaled_sgd_step(lambda lr: lr * lr),
            _half_sgd_step,
        ),
    )
)

# ---- 02.encoder_moves ------------------------------------------------------------------------

MOVES_VARIANTS = (
    Variant(
        "the story's bench with torch.optim.SGD at lr 0.01",
        "SGD updates the encoder",
        update=experiments.sgd,
        optimizer="SGD",
        lr=1e-2,  # the update's settings vary too: an experiment must step the one given
    ),
    Variant("the story's bench with Adam", "this is the story's observation"),
    Variant(
        "the story's bench with a manual SGD step",
        "a hand-written step must move the encoder as torch's SGD does",
        update=lambda lr: functools.partial(_reference_sgd_step(), lr=lr),
        optimizer=None,
    ),
    Variant(
        f"a later profile ({LATER.name}) with Adam",
        "on a fixed profile Adam moves the encoder: an experiment that says otherwise "
        "remembers the story instead of measuring the bench",
        {"profile": LATER},
    ),
    Variant(
        "the CPU with Adam",
        "the CPU is the control: the same model and optimizer train there",
        {"device": "cpu"},
    ),
    Variant(
        "another seed and smaller sizes, with Adam",
        "the conclusion must not depend on one seed or on the story's shapes",
        {"seed": 3, **SMALL},
    ),
    Variant(
        "a later profile, a batch of one sample, Adam at lr = 1e-8",
        "one sample uses only k features, so only k rows of the encoder get a gradient, each "
        "moving by a float32 step or two: a sum, the first rows or allclose all miss that",
        {"profile": LATER, "batch_size": 1, **SMALL},
        lr=1e-8,
    ),
    Variant(
        "the same values initialised another way, on the story's profile, with Adam",
        # "contiguous" is not named here: that would answer 02.contiguous, predicted later
        "whether these values move is a fact about the bench, measured, not the story remembered",
        {"init": "contiguous", **SMALL},
    ),
    Variant(
        f"{MADE_UP.label}, with Adam",
        "here Adam's state and the weights disagree: whether the encoder moved is read from "
        "its snapshots, not from a proxy such as exp_avg_sq, the loss or the optimizer's kind",
        {"profile": MADE_UP, "seed": 2, **SMALL},
    ),
    Variant(
        "a later profile, one sample that keeps a single feature (k = 1), its first 48 "
        "inputs zero, with Adam",
        "one feature and 16 inputs: 16 of the encoder's 16,384 elements move, in one row (an "
        "odd one) and the last columns. Compare every element, not every other row, the first "
        "rows or the first columns",
        {"profile": LATER, "batch_size": 1, "seed": 1, **SMALL, "k": 1},
        zero_columns=48,
    ),
)


@functools.cache
def _expected_moves(index: int) -> bool:
    variant = MOVES_VARIANTS[index]
    return reference_encoder_moves()(variant.bench(), variant.make_update())


def _check_encoder_moves(fn: Callable) -> Verdict:
    for index, variant in enumerate(MOVES_VARIANTS):
        b = variant.bench()
        calls = watch_backward(b)
        got = fn(b, variant.make_update())
        verdict = stepped_outside(b, variant.what) or stepped_other(b, variant)
        verdict = verdict or _one_step(b, variant) or require_bool(got, variant)
        if verdict is not None:
            return verdict
        if got != _expected_moves(index):
            return _wrong_conclusion(fn, b, calls, variant, got, _expected_moves(index))
    return passed(
        f"right on all {len(MOVES_VARIANTS)} hidden benches. Gradients flow and both SGDs move "
        "the encoder; Adam does not. The optimizer is the suspect now."
    )


def _one_step(b: Bench, variant: Variant) -> Verdict | None:
    if len(b.steps) <= 1:
        return None
    return failed(
        f"on {variant.what} your function took {len(b.steps)} steps: the question is whether "
        "ONE step moves the encoder (after one backward)",
        len(b.steps),
        1,
    )


def _wrong_conclusion(
    fn: Callable, b: Bench, calls: list[int], variant: Variant, got: bool, moves: bool
) -> Verdict:
    """What most likely went wrong, once the step itself ran as asked (the log says so)."""
    moved_here = not torch.equal(b.initial[ENCODER], b.snapshot()[ENCODER])
    if variant.optimizer is not None and not b.steps:
        cause = (
            "your function took no step with `update` on the bench: an answer that does not "
            "run the experiment is right on some benches only"
        )
    elif b.parameter(ENCODER).grad is None or unprepared_step(b, calls) is not None:
        cause = (
            "your step ran without bench.backward() before it: with no gradient yet, no "
            "optimizer has anything to move the encoder by. Backward first, then step"
        )
    elif _answers_inverted(fn, moves):
        other = MOVES_VARIANTS[1 if moves else 0].what
        cause = (
            f"on {other} your function said {not got}, also the opposite of what happens: "
            "your answer is the wrong way round. encoder_moves is True when the encoder "
            "changed (did_not_move says True when it did not: negate it)"
        )
    elif moves and moved_here:
        cause = (
            "your step did move the encoder on this bench, so your answer does not come from "
            "its values: do you compare every element of encoder.weight exactly, with `before` "
            "a copy taken before the step (bench.snapshot())? A `before` that is the parameter "
            "itself changes with it"
        )
    elif moves:
        cause = "your step left the encoder as it was here: does the step get the gradients?"
    else:
        cause = "do you compare encoder.weight's own snapshots, and do you really step?"
    moved = "moves" if moves else "does not move"
    return failed(
        f"on {variant.what} the encoder {moved} after one step, and your function said "
        f"{got} ({variant.why}): {cause}",
        got,
        moves,
    )


def _answers_inverted(fn: Callable, moves: bool) -> bool:
    """Whether the learner's function is also wrong, the other way, on a bench of the opposite
    outcome (the story's Adam where the encoder should move, the story's SGD where not)."""
    index = 1 if moves else 0
    variant = MOVES_VARIANTS[index]
    try:
        got = fn(variant.bench(), variant.make_update())
    except Exception:  # a probe only: the learner's failure was already found elsewhere
        return False
    return isinstance(got, bool) and got != _expected_moves(index)


def reference_encoder_moves():
    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()["encoder.weight"]
        bench.step(update)
        return not torch.equal(before, bench.snapshot()["encoder.weight"])

    return encoder_moves


def _encoder_moves_comparing(compare: Callable, name: str = ENCODER):
    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()[name]
        bench.step(update)
        return not compare(before, bench.snapshot()[name])

    return encoder_moves


def _aliased_snapshot():
    def encoder_moves(bench, update):  # "before" is the parameter itself, not a copy
        bench.backward()
        before = bench.parameter(ENCODER).detach()
        bench.step(update)
        return not torch.equal(before.cpu(), bench.parameter(ENCODER).detach().cpu())

    return encoder_moves


def _no_backward():
    def encoder_moves(bench, update):
        before = bench.snapshot()[ENCODER]
        bench.step(update)
        return not torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


def _stepped_outside_the_bench():
    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()[ENCODER]
        made = update(list(bench.model.parameters()))
        if made is not None:
            made.step()  # outside `with bench:`: on whatever profile is in force
        return not torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


def _always_adam():
    def encoder_moves(bench, update):  # the story's optimizer, whatever `update` says
        bench.backward()
        before = bench.snapshot()[ENCODER]
        bench.step(experiments.adam(lr=1e-3))
        return not torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


def _inverted():
    def encoder_moves(bench, update):  # did_not_move's answer, not negated
        bench.backward()
        before = bench.snapshot()[ENCODER]
        bench.step(update)
        return torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


def _two_steps():
    def encoder_moves(bench, update):
        before = bench.snapshot()[ENCODER]
        for _ in range(2):
            bench.backward()
            bench.step(update)
        return not torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


def _step_then_backward():
    def encoder_moves(bench, update):
        before = bench.snapshot()[ENCODER]
        bench.step(update)
        bench.backward()
        return not torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


def _by_optimizer():
    def encoder_moves(bench, update):  # the story's table, remembered: Adam never moves
        bench.backward()
        return not isinstance(bench.step(update), torch.optim.Adam)

    return encoder_moves


def _cpu_alias():
    def encoder_moves(bench, update):  # .cpu() of a CPU tensor is that tensor: no copy
        bench.backward()
        before = bench.parameter(ENCODER).detach().cpu()
        bench.step(update)
        return not torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


def _by_adam_state():
    def encoder_moves(bench, update):  # exp_avg_sq all 0 taken for "frozen"; SGD always moves
        bench.backward()
        optimizer = bench.step(update)
        if not isinstance(optimizer, torch.optim.Adam):
            return True
        return optimizer.state[bench.parameter(ENCODER)]["exp_avg_sq"].any().item()

    return encoder_moves


def _own_adam():
    def encoder_moves(bench, update):  # the story's Adam whenever `update` makes an Adam
        bench.backward()
        before = bench.snapshot()[ENCODER]
        made = update(list(bench.model.parameters()))
        if isinstance(made, torch.optim.Adam):
            made = experiments.adam(lr=1e-3)(list(bench.model.parameters()))
        with bench:
            if made is not None:
                made.step()
        return not torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


register(
    Exercise(
        name="02.encoder_moves",
        prompt="Write encoder_moves(bench, update) -> bool: after one backward and one step "
        "with `update`, did encoder.weight change at all?",
        checker=_check_encoder_moves,
        hint="bench.backward() sets the gradients; bench.snapshot() copies the values; "
        "bench.step(update) takes the step, with the bench active. Compare the encoder's two "
        "snapshots exactly.",
        reference=reference_encoder_moves,
        wrong_answers=(
            lambda: lambda bench, update: False,
            lambda: _encoder_moves_comparing(torch.allclose),
            _aliased_snapshot,
            _no_backward,
            lambda: _encoder_moves_comparing(torch.equal, "decoder.weight"),
            _stepped_outside_the_bench,
            _always_adam,
            lambda: _encoder_moves_comparing(lambda a, b: torch.equal(a[:8], b[:8])),
            lambda: _encoder_moves_comparing(lambda a, b: bool(a.sum() == b.sum())),
            _inverted,
            _two_steps,
            _step_then_backward,
            _by_optimizer,
            _cpu_alias,
            lambda: _encoder_moves_comparing(lambda a, b: bool((a - b).abs().max() < 1e-6)),
            lambda: _encoder_moves_comparing(lambda a, b: torch.equal(a.half(), b.half())),
            lambda: _encoder_moves_comparing(lambda a, b: bool(a.mean() == b.mean())),
            lambda: _encoder_moves_comparing(lambda a, b: torch.equal(a[::2], b[::2])),
            lambda: _encoder_moves_comparing(lambda a, b: torch.equal(a[:, :8], b[:, :8])),
            _by_adam_state,
            _own_adam,
        ),
    )
)
