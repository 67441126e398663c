"""02.sgd_step and 02.encoder_moves: one step by hand, and which optimizer moves the encoder.

A manual step is checked on the parameter objects themselves, not on the list handed in, so a
write that never reaches them (a rebound name, a replaced list entry or slice, `p.data = ...`)
is caught and named: the lost write the course is about must not pass its own checker.
"""

from __future__ import annotations

import contextlib
import functools
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
    SMALL,
    Variant,
    require_bool,
    stepped_other,
    stepped_outside,
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
    gen = torch.Generator().manual_seed(2)
    cases = []
    for what, layout, device, lr, shapes in (
        (
            "a weight and a bias on the emulated device",
            "transposed",
            emps.DEVICE,
            1e-3,
            ((6, 4), (5,)),
        ),
        (
            "a contiguous weight and a bias on the CPU, lr 0.5",
            "contiguous",
            "cpu",
            0.5,
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


def _lost_write(case: SgdCase, given: list, result: object) -> Verdict | None:
    """Which write never reached the parameters, when some did not change at all."""
    now = [p.detach().cpu() for p in case.params]
    unchanged = [
        i for i, (a, b) in enumerate(zip(now, case.start, strict=True)) if torch.equal(a, b)
    ]
    if not unchanged:
        return None
    expected = "p - lr * grad, written into p"
    if len(unchanged) < len(now):
        i = unchanged[0]
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
    else:
        cause = (
            "if you wrote `p = p - lr * p.grad`, the new tensor was bound to the local name `p` "
            "and the model's parameter never received the write: a lost write, the theme of "
            "this course."
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
        cause = "SGD moves each parameter by -lr times its gradient"
        if torch.allclose(now, start + case.lr * grad, rtol=1e-6, atol=1e-7):
            cause = "your step went uphill, +lr * grad: gradient DEscent subtracts"
        elif torch.allclose(now, start - grad, rtol=1e-6, atol=1e-7):
            cause = f"your step ignored lr (= {case.lr} here): it moved by the whole gradient"
        return failed(
            f"on {case.what} parameter {i} differs from torch.optim.SGD's step "
            f"(max diff {(now - want).abs().max().item():.3g}): {cause}"
        )
    return None


def _check_sgd_step(fn: Callable) -> Verdict:
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
        verdict = verdict or _lost_write(case, given, result) or _swapped_memory(case)
        verdict = verdict or _wrong_values(case)
        if verdict is not None:
            return verdict
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
        ),
    )
)

# ---- 02.encoder_moves ------------------------------------------------------------------------

MOVES_VARIANTS = (
    Variant(
        "the story's bench with torch.optim.SGD",
        "SGD updates the encoder",
        update=experiments.sgd,
        optimizer="SGD",
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
        "the same values stored contiguously: whether this moves is a fact about the device",
        {"init": "contiguous", **SMALL},
    ),
)


@functools.cache
def _expected_moves(index: int) -> bool:
    variant = MOVES_VARIANTS[index]
    return reference_encoder_moves()(variant.bench(), variant.make_update())


def _check_encoder_moves(fn: Callable) -> Verdict:
    for index, variant in enumerate(MOVES_VARIANTS):
        b = variant.bench()
        got = fn(b, variant.make_update())
        verdict = stepped_outside(b, variant.what) or stepped_other(b, variant)
        verdict = verdict or require_bool(got, variant)
        if verdict is not None:
            return verdict
        if got != _expected_moves(index):
            return _wrong_conclusion(b, variant, got, _expected_moves(index))
    return passed(
        f"right on all {len(MOVES_VARIANTS)} hidden benches. Gradients flow and both SGDs move "
        "the encoder; Adam does not. The optimizer is the suspect now."
    )


def _wrong_conclusion(b: Bench, variant: Variant, got: bool, moves: bool) -> Verdict:
    """What most likely went wrong, once the step itself ran as asked (the log says so)."""
    if variant.optimizer is not None and not b.steps:
        cause = (
            "your function took no step with `update` on the bench: an answer that does not "
            "run the experiment is right on some benches only"
        )
    elif b.parameter(ENCODER).grad is None:
        cause = (
            "the encoder has no gradient: without bench.backward() before the step, no "
            "optimizer has anything to move it by"
        )
    elif moves:
        cause = (
            "do you compare every element of encoder.weight exactly, with `before` a copy "
            "taken before the step (bench.snapshot())? A `before` that is the parameter itself "
            "changes with it"
        )
    else:
        cause = "do you compare encoder.weight's own snapshots, and do you really step?"
    moved = "moves" if moves else "does not move"
    return failed(
        f"on {variant.what} the encoder {moved} after one step, and your function said "
        f"{got} ({variant.why}): {cause}",
        got,
        moves,
    )


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
        ),
    )
)
