"""Notebook 02's exercises and predictions: the learner's experiments, run on hidden benches.

Each checker calls the learner's function on benches they never see (the story's profile, a
later one, the CPU, a contiguous init, other seeds and sizes) and compares its conclusion with the
reference experiment's on the same bench. A function that remembers the story instead of
measuring the device gets an answer wrong somewhere, and the message says where and why.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from course import emps
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    passed,
    register,
    register_prediction,
)
from course.isolation.experiments import ENCODER, Bench, adam, bench, sgd
from course.layout.named import laid_out

LATER = emps.FIXED_MACOS14  # a profile without the story's bug, for hidden benches

# ---- hidden benches ----------------------------------------------------------------------------

SMALL = {"d_model": 64, "n_features": 256, "k": 8}  # other sizes, and quicker to run


@dataclass(frozen=True)
class Variant:
    """One hidden bench and one update, with why a right experiment must get it right."""

    what: str
    why: str
    settings: dict = field(default_factory=dict)
    update: str = "adam"
    lr: float = 1e-3

    def bench(self) -> Bench:
        """A fresh bench for this variant (each experiment gets its own)."""
        return bench(**self.settings)

    def make_update(self) -> Callable:
        """The update this variant hands to the learner's function."""
        if self.update == "sgd":
            return sgd(self.lr)
        if self.update == "manual":
            return functools.partial(_reference_sgd_step(), lr=self.lr)
        return adam(self.lr)


MOVES_VARIANTS = (
    Variant("the story's bench with torch.optim.SGD", "SGD updates the encoder", update="sgd"),
    Variant("the story's bench with Adam", "this is the story's observation"),
    Variant(
        "the story's bench with a manual SGD step",
        "a hand-written step must move the encoder as torch's SGD does",
        update="manual",
    ),
    Variant(
        f"a later profile ({LATER.name}) with Adam",
        "on a fixed profile Adam moves the encoder; an experiment that says otherwise describes "
        "Adam, not the device",
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
        "a later profile with Adam at lr = 1e-8",
        "with a tiny learning rate a weight moves by a float32 step or two: only an exact "
        "comparison sees it",
        {"profile": LATER, **SMALL},
        lr=1e-8,
    ),
    Variant(
        "the same values initialised another way, on the story's profile, with Adam",
        "the same values stored contiguously: whether this moves is a fact about the device",
        {"init": "contiguous", **SMALL},
    ),
)


def _require_bool(got: object, variant: Variant) -> Verdict | None:
    if isinstance(got, bool):
        return None
    return failed(
        f"on {variant.what} your function returned {got!r}; return True or False "
        "(a tensor? use torch.equal, which gives a bool)",
        type(got).__name__,
        "bool",
    )


# ---- 02.did_not_move -------------------------------------------------------------------------


def _nudged(w: torch.Tensor, amount: float) -> torch.Tensor:
    out = w.clone()
    out[2, 3] = torch.nextafter(out[2, 3], torch.tensor(float("inf"))) + amount
    return out


def _check_did_not_move(fn: Callable) -> Verdict:
    w = torch.randn(6, 4, generator=torch.Generator().manual_seed(0))
    cases = [
        ("an identical copy", w, w.clone(), True),
        ("one element moved to the next float32 value", w, _nudged(w, 0.0), False),
        ("a change of 0.5 in one element", w, _nudged(w, 0.5), False),
        ("the same values stored another way in memory", w, w.t().contiguous().t(), True),
        ("an identical copy on the emulated device", w, w.to(emps.DEVICE), True),
    ]
    for what, before, after, expected in cases:
        got = fn(before, after)
        if not isinstance(got, bool):
            return failed(f"return a bool (True = did not move); for {what} you returned {got!r}")
        if got != expected:
            return failed(f"wrong for {what}", got, expected)
    return passed("exact equality, to the last bit: that is what 'frozen' means.")


def _reference_did_not_move():
    def did_not_move(before, after):
        return torch.equal(before.cpu(), after.cpu())

    return did_not_move


register(
    Exercise(
        name="02.did_not_move",
        prompt="Write did_not_move(before, after) -> bool: True only if no element changed at all.",
        checker=_check_did_not_move,
        hint="'Close' is not 'equal': allclose hides a one-ulp change. Use an exact comparison "
        "(on the CPU: a tensor on another device is never equal to a CPU one).",
        reference=_reference_did_not_move,
        wrong_answers=(
            lambda: lambda before, after: torch.allclose(before.cpu(), after.cpu()),
            lambda: lambda before, after: bool((after.cpu() - before).abs().max() < 1e-6),
            lambda: lambda before, after: before.stride() == after.stride(),
        ),
    )
)

# ---- 02.grad_check ---------------------------------------------------------------------------


def _story_grads() -> dict[str, torch.Tensor]:
    """Real gradients of the story's model and of a smaller one, on the emulated device."""
    out = {}
    for label, settings in (("the story's", {}), ("a smaller model's", {"seed": 5, **SMALL})):
        b = bench(**settings)
        b.backward()
        for name in ("encoder.weight", "decoder.weight"):
            out[f"{label} {name} gradient"] = b.parameter(name).grad
    return out


def _grad_cases() -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    tiny = torch.randn(8, 5, generator=gen) * 1e-12  # small, but not one of them is zero
    mostly_negative = -torch.rand(8, 5, generator=gen) - 0.5
    mostly_negative[3] = 0.0
    return {
        **_story_grads(),
        "a gradient whose largest entries are negative": mostly_negative,
        "a gradient of tiny (1e-12) but non-zero values": tiny,
        "a gradient with some -0.0 entries": torch.tensor([[0.5, -0.0], [0.0, -2.0]]),
    }


def _check_grad_check(fn: Callable) -> Verdict:
    reference = _reference_grad_check()
    for what, grad in _grad_cases().items():
        got = fn(grad)
        if not (isinstance(got, tuple) and len(got) == 2):
            return failed(
                f"return a pair (max |grad|, fraction of exact zeros); for {what} you returned "
                f"{got!r}",
                type(got).__name__,
                "tuple of two floats",
            )
        want = reference(grad)
        for i, label in enumerate(("max |grad|", "zero fraction")):
            mine = float(got[i])
            if abs(mine - want[i]) > 1e-6 * max(1.0, abs(want[i])):
                return failed(f"{label} is wrong for {what}", f"{mine:.6g}", f"{want[i]:.6g}")
    return passed(
        "max |grad| and the fraction of exact zeros, right on real and made-up gradients."
    )


def _reference_grad_check():
    def grad_check(grad):
        return grad.abs().max().item(), (grad == 0).float().mean().item()

    return grad_check


register(
    Exercise(
        name="02.grad_check",
        prompt="Write grad_check(grad) -> (max |grad|, fraction of elements exactly zero).",
        checker=_check_grad_check,
        hint="Largest magnitude: the largest absolute value. Zero fraction: count the elements "
        "equal to 0 (exactly, not 'small'), divided by the number of elements.",
        reference=_reference_grad_check,
        wrong_answers=(
            lambda: lambda g: (g.max().item(), (g == 0).float().mean().item()),
            lambda: lambda g: (g.abs().max().item(), (g.abs() < 1e-8).float().mean().item()),
            lambda: lambda g: (g.abs().max().item(), (g == 0).sum().item()),
            lambda: lambda g: (g.abs().max().item(), g.count_nonzero().item() / g.numel()),
        ),
    )
)

# ---- 02.sgd_step -----------------------------------------------------------------------------


def _sgd_cases() -> list[tuple[str, list[torch.nn.Parameter], float]]:
    gen = torch.Generator().manual_seed(2)
    cases = []
    for what, layout, device, lr in (
        ("a weight on the emulated device", "transposed", emps.DEVICE, 1e-3),
        ("a contiguous weight on the CPU", "contiguous", "cpu", 0.5),
        ("another weight on the CPU, lr 0.1", "transposed", "cpu", 0.1),
    ):
        params = []
        for shape in ((6, 4), (5,)):
            values = torch.randn(shape, generator=gen)
            kind = layout if len(shape) == 2 else "contiguous"
            p = torch.nn.Parameter(laid_out(values, kind, device))
            p.grad = laid_out(torch.randn(shape, generator=gen), kind, device)
            params.append(p)
        cases.append((what, params, lr))
    return cases


def _check_sgd_step(fn: Callable) -> Verdict:
    for what, params, lr in _sgd_cases():
        before = [p.detach().cpu().clone() for p in params]
        twins = [torch.nn.Parameter(p.detach().clone()) for p in params]
        for twin, p in zip(twins, params, strict=True):
            twin.grad = p.grad.clone()
        torch.optim.SGD(twins, lr=lr).step()
        result = fn(params, lr)
        for p, start, twin in zip(params, before, twins, strict=True):
            now, want = p.detach().cpu(), twin.detach().cpu()
            if torch.equal(now, start):
                return failed(
                    f"on {what} the parameter tensors are unchanged after your step"
                    + (
                        " (your function returned a value: the model never sees it)"
                        if result is not None
                        else ""
                    )
                    + ". If you wrote `p = p - lr * p.grad`, the new tensor was bound to the "
                    "local name `p` and the model's parameter never received the write: a lost "
                    "write, the theme of this course. Write into the tensor in place.",
                    "unchanged",
                    "p - lr * grad, written into p",
                )
            if not torch.allclose(now, want, rtol=1e-6, atol=1e-7):
                return failed(
                    f"on {what} your step differs from torch.optim.SGD "
                    f"(max diff {(now - want).abs().max().item():.3g}): SGD moves each "
                    "parameter by -lr times its gradient",
                    now.flatten()[:3].tolist(),
                    want.flatten()[:3].tolist(),
                )
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


def _sgd_without_no_grad():
    def sgd_step(params, lr):
        for p in params:
            p.sub_(lr * p.grad)

    return sgd_step


register(
    Exercise(
        name="02.sgd_step",
        prompt="Write sgd_step(params, lr): one plain SGD step, p <- p - lr * p.grad, in place.",
        checker=_check_sgd_step,
        hint="Inside `with torch.no_grad():`, update each tensor in place (`p -= ...` or "
        "`p.sub_(...)`): a new tensor bound to a name is not the model's parameter.",
        reference=_reference_sgd_step,
        wrong_answers=(
            _rebinding_sgd_step,
            _sgd_without_no_grad,
            lambda: lambda params, lr: [p.data.sub_(p.grad) for p in params],
            lambda: lambda params, lr: [p.data.add_(lr * p.grad) for p in params],
        ),
    )
)

# ---- 02.encoder_moves ------------------------------------------------------------------------


@functools.cache
def _expected_moves(index: int) -> bool:
    variant = MOVES_VARIANTS[index]
    return _reference_encoder_moves()(variant.bench(), variant.make_update())


def _check_encoder_moves(fn: Callable) -> Verdict:
    for index, variant in enumerate(MOVES_VARIANTS):
        got = fn(variant.bench(), variant.make_update())
        wrong_type = _require_bool(got, variant)
        if wrong_type is not None:
            return wrong_type
        if got != _expected_moves(index):
            moved = "moves" if _expected_moves(index) else "does not move"
            return failed(
                f"on {variant.what} the encoder {moved} after one step, and your function "
                f"said {got}: {variant.why}",
                got,
                _expected_moves(index),
            )
    return passed(
        f"right on all {len(MOVES_VARIANTS)} hidden benches: SGD moves the encoder, Adam does "
        "not, on this device only. The optimizer is the suspect now."
    )


def _reference_encoder_moves():
    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()[ENCODER]
        bench.step(update)
        return not torch.equal(before, bench.snapshot()[ENCODER])

    return encoder_moves


def _watches_the_decoder():
    def encoder_moves(bench, update):  # compares the wrong weight
        bench.backward()
        before = bench.snapshot()["decoder.weight"]
        bench.step(update)
        return not torch.equal(before, bench.snapshot()["decoder.weight"])

    return encoder_moves


def _close_is_equal():
    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()[ENCODER]
        bench.step(update)
        return not torch.allclose(before, bench.snapshot()[ENCODER])

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


register(
    Exercise(
        name="02.encoder_moves",
        prompt="Write encoder_moves(bench, update) -> bool: after one backward and one step "
        "with `update`, did encoder.weight change at all?",
        checker=_check_encoder_moves,
        hint="bench.backward() sets the gradients; bench.snapshot() copies the values; "
        "bench.step(update) takes the step. Compare the encoder's two snapshots exactly.",
        reference=_reference_encoder_moves,
        wrong_answers=(
            lambda: lambda bench, update: False,
            _close_is_equal,
            _aliased_snapshot,
            _no_backward,
            _watches_the_decoder,
        ),
    )
)

# ---- 02.adam_state ---------------------------------------------------------------------------

STATE_VARIANTS = (
    Variant("the story's bench", "this is the story's observation"),
    Variant(
        f"a later profile ({LATER.name})",
        "the same step on a fixed profile: the state must follow the device",
        {"profile": LATER},
    ),
    Variant("the CPU", "the control", {"device": "cpu", **SMALL}),
    Variant("another seed, smaller sizes", "not one seed's numbers", {"seed": 4, **SMALL}),
)


@functools.cache
def _expected_state(index: int) -> tuple[float, float]:
    return _reference_adam_state()(STATE_VARIANTS[index].bench())


def _check_adam_state(fn: Callable) -> Verdict:
    for index, variant in enumerate(STATE_VARIANTS):
        try:
            got = fn(variant.bench())
        except KeyError as missing:
            return failed(
                f"on {variant.what} your function looked up a key that is not there "
                f"({missing}): optimizer.state is keyed by the parameter tensor itself "
                "(bench.parameter('encoder.weight')), and each entry holds 'step', 'exp_avg' "
                "and 'exp_avg_sq'"
            )
        if not (isinstance(got, tuple) and len(got) == 2):
            return failed(
                f"return a pair (max |exp_avg|, max exp_avg_sq); on {variant.what} you "
                f"returned {got!r}",
                type(got).__name__,
                "tuple of two floats",
            )
        want = _expected_state(index)
        for i, label in enumerate(("max |exp_avg|", "max exp_avg_sq")):
            mine = float(got[i])
            if abs(mine - want[i]) > 1e-6 * abs(want[i]) + 1e-30:
                return failed(
                    f"{label} of the encoder weight after one Adam step is wrong on "
                    f"{variant.what} ({variant.why})",
                    f"{mine:.4g}",
                    f"{want[i]:.4g}",
                )
    return passed(
        "you read Adam's state yourself: exp_avg is there, exp_avg_sq is exactly 0 on the "
        "story's profile only. An average of squares that stays 0: impossible, if the op ran."
    )


def _reference_adam_state():
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(adam(lr=1e-3))
        state = optimizer.state[bench.parameter("encoder.weight")]
        return state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()

    return encoder_adam_state


def _adam_state_reading(name: str, signed: bool = False):
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(adam(lr=1e-3))
        state = optimizer.state[bench.parameter(name)]
        m = state["exp_avg"].max() if signed else state["exp_avg"].abs().max()
        return m.item(), state["exp_avg_sq"].abs().max().item()

    return encoder_adam_state


def _state_by_name():
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(adam(lr=1e-3))
        state = optimizer.state["encoder.weight"]  # state is keyed by the tensor, not its name
        return state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()

    return encoder_adam_state


register(
    Exercise(
        name="02.adam_state",
        prompt="Write encoder_adam_state(bench) -> (max |exp_avg|, max exp_avg_sq) of the "
        "encoder weight after one backward and one Adam step (lr 1e-3).",
        checker=_check_adam_state,
        hint="bench.step(adam(lr=1e-3)) returns the optimizer; optimizer.state is a dict keyed "
        "by the parameter tensor itself (bench.parameter('encoder.weight')).",
        reference=_reference_adam_state,
        wrong_answers=(
            lambda: _adam_state_reading("decoder.weight"),
            lambda: _adam_state_reading("encoder.weight", signed=True),
            _state_by_name,
            lambda: lambda bench: (0.004, 0.0),
        ),
    )
)

# ---- 02.two_variables ------------------------------------------------------------------------

CHANGED = ("dtype", "device", "optimizer", "learning rate", "init", "betas")


def _check_two_variables(answer: object) -> Verdict:
    if not isinstance(answer, (set, frozenset, list, tuple)):
        return failed("give a set of names, e.g. {'betas'}", type(answer).__name__, "set")
    chosen = set(answer)
    unknown = chosen - set(CHANGED)
    if unknown:
        return failed(f"{sorted(unknown)} are not among the choices {CHANGED}")
    if chosen == {"dtype", "device"}:
        return passed(
            "float64 is refused on the device, so the float64 run ran on the CPU: the dtype "
            "AND the device changed. Either one could be the cause: test them separately."
        )
    if chosen == {"dtype"}:
        return failed(
            "the dtype changed, but where did the float64 run run? The device refused it", chosen
        )
    return failed("not the variables that changed between the two runs", sorted(chosen))


def _reference_two_variables():
    return {"dtype", "device"}


register(
    Exercise(
        name="02.two_variables",
        prompt="The float64 run trained and the float32 one did not. Which variables changed "
        f"between the two runs? A set of names from {CHANGED}.",
        checker=_check_two_variables,
        hint="What did the device say when you asked for float64, and so where did the "
        "float64 run happen?",
        reference=_reference_two_variables,
        wrong_answers=(
            lambda: {"dtype"},
            lambda: {"device"},
            lambda: {"dtype", "optimizer"},
        ),
    )
)

# ---- 02.differences --------------------------------------------------------------------------

PROPERTIES = ("device", "dtype", "shape", "stride", "is_contiguous")


def _metadata_pairs() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    story = bench(**SMALL).model
    enc, dec = story.encoder.weight.detach(), story.decoder.weight.detach()
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(3))
    return [
        ("the encoder and decoder weights", enc, dec),
        ("the encoder weight and a contiguous copy of it", enc, enc.contiguous()),
        ("a tensor and its exact clone", x, x.clone()),
        ("a tensor and its float64 copy", x, x.double()),
        ("a tensor on the CPU and its copy on the emulated device", x, x.to(emps.DEVICE)),
        ("a tensor and the same values every other column", x, laid_out(x, "step-sliced")),
        (
            "a tensor and the same values 7 elements into a storage",
            x,
            laid_out(x, "storage-offset"),
        ),
    ]


def _check_differences(fn: Callable) -> Verdict:
    reference = _reference_differences()
    for what, a, b in _metadata_pairs():
        got = fn(a, b)
        if not isinstance(got, (set, frozenset)) or not set(got) <= set(PROPERTIES):
            return failed(
                f"return a set of names from {PROPERTIES}; for {what} you returned {got!r}"
            )
        want = reference(a, b)
        if set(got) != want:
            return failed(
                f"wrong for {what}: compare every property, and call the methods "
                "(a.stride() and a.is_contiguous(), not a.stride)",
                sorted(got),
                sorted(want),
            )
    return passed(
        "your comparison sees every metadata difference: the encoder differs from a contiguous "
        "copy of itself only in its stride (and so its contiguity)."
    )


def _reference_differences():
    def differences(a, b):
        mine = (a.device, a.dtype, a.shape, a.stride(), a.is_contiguous())
        theirs = (b.device, b.dtype, b.shape, b.stride(), b.is_contiguous())
        return {n for n, x, y in zip(PROPERTIES, mine, theirs, strict=True) if x != y}

    return differences


def _differences_of(properties: tuple[str, ...], call: bool = True):
    def differences(a, b):
        def value(t, name):
            got = getattr(t, name)
            return got() if call and callable(got) else got

        return {n for n in properties if value(a, n) != value(b, n)}

    return differences


register(
    Exercise(
        name="02.differences",
        prompt="Write differences(a, b) -> set of the metadata properties (device, dtype, "
        "shape, stride, is_contiguous) in which two tensors differ.",
        checker=_check_differences,
        hint="a.device, a.dtype and a.shape are attributes; a.stride() and a.is_contiguous() "
        "are methods: call them.",
        reference=_reference_differences,
        wrong_answers=(
            lambda: _differences_of(("device", "dtype", "shape")),
            lambda: _differences_of(PROPERTIES, call=False),
            lambda: lambda a, b: set() if torch.equal(a.cpu(), b.cpu()) else {"shape"},
        ),
    )
)

# ---- predictions -----------------------------------------------------------------------------


def _zero_pattern() -> str:
    b = bench()
    b.backward()
    zero = b.parameter(ENCODER).grad.cpu() == 0  # (n_features, d_model)
    if not zero.any():
        return "there are no zeros"
    if torch.equal(zero.all(dim=1), zero.any(dim=1)):
        return "whole rows"
    if torch.equal(zero.all(dim=0), zero.any(dim=0)):
        return "whole columns"
    return "scattered elements"


register_prediction(
    Prediction(
        "02.zero_pattern",
        "Where are the exact zeros in encoder.weight's gradient (shape [1536, 384]: one row "
        "per feature)?",
        ("whole rows", "whole columns", "scattered elements", "there are no zeros"),
        _zero_pattern,
        "Whole rows: TopK keeps 32 of 1536 features per sample, and a feature that no sample "
        "of the batch kept passes back no gradient at all, so its whole row is zero. The zero "
        "fraction is the share of features nobody in the batch used: it depends on the batch "
        "size, k, the width and the data. That is why ours is not the story's 88.5%.",
    )
)


def _update_size() -> str:
    b = bench()
    b.backward()
    optimizer = b.step(adam(lr=1e-3))
    state = optimizer.state[b.parameter(ENCODER)]
    m, v = state["exp_avg"].abs().max().item(), state["exp_avg_sq"].abs().max().item()
    should = 1e-3 * m / (v**0.5 + 1e-8)
    return "0" if should == 0 else "about lr" if should < 1e-2 else "enormous: lr * m / eps"


register_prediction(
    Prediction(
        "02.update_size",
        "With exp_avg_sq exactly 0, how far should one Adam step (lr 1e-3, eps 1e-8) move the "
        "encoder's largest element: lr * |exp_avg| / (sqrt(exp_avg_sq) + eps)?",
        ("0", "about lr", "enormous: lr * m / eps"),
        _update_size,
        "Enormous: sqrt(0) + eps = 1e-8, so the step is |exp_avg| * 1e5, thousands of times "
        "larger than the weights. Yet your snapshot says the encoder did not move at all. "
        "Two impossible things at once: remember this for notebook 03.",
    )
)


def _contiguous_moves() -> str:
    return "yes" if _reference_encoder_moves()(bench(init="contiguous"), adam()) else "no"


register_prediction(
    Prediction(
        "02.contiguous",
        "Same values, same device, same profile: if encoder.weight were contiguous, would one "
        "Adam step move it?",
        ("yes", "no"),
        _contiguous_moves,
        "Yes: with the stride the only difference, Adam moves a contiguous encoder on the same "
        "emulated device. Something on this stack mishandles a non-contiguous tensor.",
    )
)
