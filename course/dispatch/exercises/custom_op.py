"""05.custom_op: an operator of the learner's own, with a CPU kernel and a fake kernel.

The checker registers the pair under `SCHEMA` and runs it on hidden inputs that vary everything
the schema names (layouts, a storage offset, dtypes, 3 dims, beta). The CPU kernel must leave its
inputs alone and compute the formula; the fake kernel, run on meta tensors of the same layout,
must promise exactly the real output's shape, strides and dtype. When they disagree, the real
kernel's layout across all inputs says why: it follows avg_sq (the formula's first operand),
grad (grad's term first), or neither (a `.contiguous()` or a fresh tensor). Then
torch.library.opcheck runs its own schema, autograd-registration and fake-tensor tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from course.dispatch.exercises.common import first_line
from course.dispatch.registration import define_op
from course.exercises import Exercise, Verdict, failed, is_scaffold, not_attempted, passed, register

SCHEMA = "course05_check::ema_sq(Tensor avg_sq, Tensor grad, float beta) -> Tensor"


@dataclass(frozen=True)
class Inputs:
    """One hidden call: what the learner is told it was, and its arguments."""

    what: str
    avg_sq: torch.Tensor
    grad: torch.Tensor
    beta: float

    @property
    def label(self) -> str:
        return f"{self.what}, beta={self.beta}"


def inputs() -> list[Inputs]:
    """The hidden calls, from a private generator (the learner's global RNG is left alone)."""
    gen = torch.Generator().manual_seed(0)

    def rand(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.rand(*shape, generator=gen, dtype=dtype)

    return [
        Inputs("a contiguous avg_sq and a transposed grad", rand(3, 4), rand(4, 3).t(), 0.9),
        Inputs("a transposed avg_sq and a contiguous grad", rand(4, 3).t(), rand(3, 4), 0.5),
        Inputs(
            "a float64 avg_sq of 3 dims, permuted, and a contiguous grad",
            rand(2, 3, 4, dtype=torch.float64).permute(2, 0, 1),
            rand(4, 2, 3, dtype=torch.float64),
            0.999,
        ),
        Inputs(
            "an avg_sq sliced out of a bigger tensor (a storage offset, gaps between rows)",
            rand(5, 6)[1:4, 2:6],
            rand(4, 3).t(),
            0.25,
        ),
    ]


def formula(avg_sq: torch.Tensor, grad: torch.Tensor, beta: float) -> torch.Tensor:
    """Adam's second moment as torch computes it, avg_sq's term first: the operations of
    `beta * avg_sq + (1 - beta) * grad * grad` in that order, so bitwise the same values and
    layout, written as calls (the student release must not hold the notebook's answer)."""
    return torch.add(torch.mul(avg_sq, beta), torch.mul(torch.mul(grad, 1 - beta), grad))


def _layout(t: torch.Tensor) -> tuple:
    return tuple(t.shape), t.stride(), t.dtype


def _contiguous_strides(t: torch.Tensor) -> tuple[int, ...]:
    return torch.empty(t.shape, device="meta").stride()


# How a real kernel's result may be laid out: each rule gives the strides it predicts.
LAYOUT_RULES: dict[str, Callable[[Inputs], tuple[int, ...]]] = {
    "avg_sq": lambda c: formula(c.avg_sq, c.grad, c.beta).stride(),
    "grad": lambda c: ((1 - c.beta) * c.grad * c.grad + c.beta * c.avg_sq).stride(),
    "row-major": lambda c: _contiguous_strides(c.avg_sq),
}

EXPECTED = "beta * avg_sq + (1 - beta) * grad**2"
# Formulas a learner writes by mistake, and what is wrong with each.
FORMULA_MISTAKES: tuple[tuple[Callable, str], ...] = (
    (lambda a, g, b: b * a + g * g, "grad**2 is not weighted by (1 - beta)"),
    (
        lambda a, g, b: (1 - b) * a + b * g * g,
        "beta and (1 - beta) are swapped: beta weights the old average avg_sq",
    ),
    (lambda a, g, b: b * a + (1 - b) * g, "grad is not squared"),
    (
        lambda a, g, b: 0.9 * a + 0.1 * g * g,
        "that is beta = 0.9 whatever beta is: use the beta your kernel is given",
    ),
)


def _check(answer: object) -> Verdict:
    if not (isinstance(answer, tuple) and len(answer) == 2 and all(map(callable, answer))):
        return failed(
            "answer with a pair of functions: (cpu_kernel, fake_kernel)",
            answer,
            "(cpu_kernel, fake_kernel)",
        )
    custom, cases, results = define_op(SCHEMA, answer[0], answer[1]), inputs(), []
    try:  # every real result first (each told on its own), then the fakes against them
        for case in cases:
            result = _real(custom.op, case)
            if isinstance(result, Verdict):
                return result
            results.append(result)
        behaviour = _layout_rule(cases, results)
        for case, result in zip(cases, results, strict=True):
            verdict = _fake(custom.op, case, result, behaviour)
            if verdict is not None:
                return verdict
        return _opcheck(custom.op, cases)
    except Exception as exc:
        if is_scaffold(exc):
            return not_attempted("a kernel still raises NotImplementedError.")
        return failed(f"calling your op raised {type(exc).__name__}: {first_line(exc)}")
    finally:
        custom.remove()


def _real(op, case: Inputs) -> torch.Tensor | Verdict:
    """The CPU kernel's result on one call, or the verdict on what it did wrong."""
    avg_sq, grad = _copy_layout(case.avg_sq), _copy_layout(case.grad)
    result = op(avg_sq, grad, case.beta)
    for name, given, original in (("avg_sq", avg_sq, case.avg_sq), ("grad", grad, case.grad)):
        if not torch.equal(given, original):
            return failed(
                f"on {case.label} your CPU kernel wrote into its input {name}, but the schema "
                f"`Tensor {name}` (no `(a!)`) promises it is only read: compute a new tensor "
                "(no in-place ops such as mul_ or add_ on the inputs)",
                f"{name} modified",
                f"{name} unchanged, a new tensor returned",
            )
    natural = formula(case.avg_sq, case.grad, case.beta)
    if result.dtype != natural.dtype:
        return failed(
            f"on {case.label} your CPU kernel returns {result.dtype} for {natural.dtype} "
            "inputs: the result has the inputs' dtype (a fix that changes it is not a fix: "
            "MPS, for one, has no float64)",
            result.dtype,
            natural.dtype,
        )
    if result.shape != natural.shape or not _close(result, natural):
        return _values_verdict(case, result, natural)
    return result


def _close(result: torch.Tensor, natural: torch.Tensor) -> bool:
    """Within a few roundings of the dtype's own precision: another order of the same formula
    (a lerp, a float64 computation) passes, float32 arithmetic on float64 inputs does not."""
    eps = torch.finfo(natural.dtype).eps
    return torch.allclose(result, natural, rtol=8 * eps, atol=eps)


def _copy_layout(t: torch.Tensor) -> torch.Tensor:
    """A fresh copy of `t` with the same sizes, strides and storage offset (inputs are never
    shared between the learner's kernels and the checker's references)."""
    storage = t.untyped_storage().clone()
    return torch.empty(0, dtype=t.dtype).set_(storage, t.storage_offset(), t.shape, t.stride())


def _values_verdict(case: Inputs, result: torch.Tensor, natural: torch.Tensor) -> Verdict:
    where = f"wrong values on {case.label}"
    if result.shape == natural.shape and _in_float32(case, result, natural):
        return failed(
            f"{where}: your kernel computes in float32 and returns {natural.dtype}, so the "
            "result has float32's precision only (about 7 digits, not 16): compute in the "
            "inputs' dtype",
            "float32 arithmetic",
            f"{natural.dtype} arithmetic",
        )
    if result.shape == natural.shape:
        for mistake, cause in FORMULA_MISTAKES:
            guess = mistake(case.avg_sq, case.grad, case.beta)
            if not torch.allclose(guess, natural) and torch.allclose(result, guess, rtol=1e-6):
                return failed(f"{where}: {cause}", "", EXPECTED)
        constant = _constant_beta(case, result)
        if constant is not None:
            return failed(
                f"{where}: that is beta = {constant:.4g} whatever beta is: use the beta your "
                "kernel is given",
                "",
                EXPECTED,
            )
    return failed(
        f"{where}",
        [round(v, 4) for v in result.flatten()[:3].tolist()],
        EXPECTED,
    )


def _in_float32(case: Inputs, result: torch.Tensor, natural: torch.Tensor) -> bool:
    """Whether wider inputs' result is the formula computed in float32 and cast back."""
    if natural.dtype == torch.float32:
        return False
    lower = formula(case.avg_sq.float(), case.grad.float(), case.beta).to(natural.dtype)
    return torch.allclose(result, lower, rtol=8 * torch.finfo(torch.float32).eps)


def _constant_beta(case: Inputs, result: torch.Tensor) -> float | None:
    """The beta the learner's values were computed with, when it is one number and not the
    call's beta (a constant written into the kernel); None otherwise."""
    avg_sq, grad_sq = case.avg_sq.double(), case.grad.double() ** 2
    spread = avg_sq - grad_sq
    usable = spread.abs() > 1e-3
    if not usable.any():
        return None
    beta = ((result.double() - grad_sq)[usable] / spread[usable]).median().item()
    fits = torch.allclose(result.double(), beta * avg_sq + (1 - beta) * grad_sq, rtol=1e-4)
    return beta if fits and abs(beta - case.beta) > 1e-6 else None


def _layout_rule(cases: list[Inputs], results: list[torch.Tensor]) -> str | None:
    """Which rule lays out the real kernel's result on every call (None: none of them)."""
    for name, rule in LAYOUT_RULES.items():
        if all(rule(c) == r.stride() for c, r in zip(cases, results, strict=True)):
            return name
    return None


def _meta_like(t: torch.Tensor) -> torch.Tensor:
    """A meta tensor with t's sizes, strides, storage offset and dtype: what tracing tools
    hand a fake kernel in place of the real input."""
    size = t.untyped_storage().nbytes() // t.element_size()
    base = torch.empty(size, dtype=t.dtype, device="meta")
    return base.as_strided(t.shape, t.stride(), t.storage_offset())


def _fake(op, case: Inputs, result: torch.Tensor, behaviour: str | None) -> Verdict | None:
    meta_avg_sq, meta_grad = _meta_like(case.avg_sq), _meta_like(case.grad)
    fake = op(meta_avg_sq, meta_grad, case.beta)
    if fake is meta_avg_sq:
        return failed(
            "your fake kernel returned its input avg_sq itself; the schema `-> Tensor` promises "
            "a new tensor, as your CPU kernel makes, so the fake must allocate one",
            "the input",
            "a new tensor",
        )
    for name, given in (("avg_sq", meta_avg_sq), ("grad", meta_grad)):
        if fake.untyped_storage()._cdata == given.untyped_storage()._cdata:
            return failed(
                f"your fake kernel returned a view of its input {name} (a view_as, an indexing, "
                f"a detach...): it shares {name}'s memory, but the schema `-> Tensor` (no "
                "`(a)`) promises a new tensor, as your CPU kernel makes, so the fake must "
                "allocate one",
                f"a view of {name}",
                "a new tensor",
            )
    if fake.device.type != "meta":
        return failed(
            f"your fake kernel made a tensor on {fake.device}; a fake kernel allocates where its "
            "inputs are (here: meta), which holds no data",
            fake.device,
            "meta",
        )
    if _layout(fake) == _layout(result):
        return None
    return failed(
        f"on {case.label}, fake and real disagree: {_disagreement(case, fake, result, behaviour)}",
        _layout(fake),
        "the real output's (shape, stride, dtype)",
    )


def _disagreement(case: Inputs, fake: torch.Tensor, real: torch.Tensor, behaviour) -> str:
    """Why the fake kernel's promise differs from the real output, naming the side at fault."""
    if fake.dtype != real.dtype:
        return (
            f"your fake kernel promises {fake.dtype}, the real output is {real.dtype}: take the "
            "dtype from avg_sq (empty_like does), do not leave it to the default"
        )
    if fake.shape != real.shape:
        return (
            f"your fake kernel promises shape {tuple(fake.shape)}, the real output has "
            f"{tuple(real.shape)}: take the shape from avg_sq, whatever its number of dims"
        )
    plain = (case.avg_sq.stride(), _contiguous_strides(case.avg_sq))
    if fake.stride() == case.grad.stride() and fake.stride() not in plain:
        return (
            f"your fake kernel allocates like grad (stride {fake.stride()}), but the real output "
            f"has stride {real.stride()}: describe the tensor your CPU kernel really returns"
        )
    dense = torch.empty_like(case.avg_sq).stride()
    if fake.stride() == case.avg_sq.stride() != dense:
        return (
            f"your fake kernel copies avg_sq's strides {fake.stride()}, gaps between rows "
            f"included (avg_sq is a slice of a bigger tensor), but an elementwise result is dense: "
            f"stride {real.stride()}. torch.empty_like keeps the order of the dims and drops "
            "the gaps"
        )
    if behaviour == "grad":
        return (
            f"your CPU kernel's result has grad's layout, stride {real.stride()}, because your "
            "formula puts grad's term first: when the operands of an elementwise op are laid "
            "out differently, the result follows the first operand. Your fake kernel promises "
            f"{fake.stride()}. Make the two agree: put avg_sq's term first, or have the fake "
            "run the same expression on its (fake) inputs"
        )
    natural = LAYOUT_RULES["avg_sq"](case)
    if behaviour == "row-major" and natural != real.stride():
        return (
            f"your CPU kernel returns stride {real.stride()}, row-major on every input, not "
            f"the layout its formula gives ({natural}): a .contiguous(), "
            "a reshape or a freshly allocated output changed it, and your fake kernel must say "
            "exactly what the real one returns"
        )
    return (
        f"the real output keeps avg_sq's layout, stride {real.stride()}, but your fake kernel "
        f"promises {fake.stride()}: allocate it like avg_sq"
    )


def _opcheck(op, cases: list[Inputs]) -> Verdict:
    # Only the tests that concern a custom op's own registrations: the aot_dispatch tests also
    # poke every registered device, and the emulated one has no RNG state to save.
    for case in cases[1:3]:
        try:
            torch.library.opcheck(
                op,
                (case.avg_sq, case.grad, case.beta),
                test_utils=("test_schema", "test_autograd_registration", "test_faketensor"),
            )
        except Exception as exc:  # its message points at a stack trace the learner cannot see
            return failed(f"on {case.label} torch.library.opcheck found: {first_line(exc)}")
    return passed(
        f"your CPU kernel computes the formula and leaves its inputs alone, and your fake kernel "
        f"promises exactly what it returns, on {len(cases)} inputs (layouts, dtypes, 3 dims, a "
        "storage offset, other betas); torch.library.opcheck agrees."
    )


register(
    Exercise(
        "05.custom_op",
        f"Write a CPU kernel and a fake kernel for `{SCHEMA}` (Adam's second moment, "
        "beta * avg_sq + (1 - beta) * grad**2, as a pure op). Answer (cpu_kernel, fake_kernel).",
        _check,
        "The CPU kernel must return a new tensor (no in-place ops on avg_sq or grad); the fake "
        "kernel only allocates an output with the real output's shape, dtype and strides.",
        minutes=15,
    )
)
