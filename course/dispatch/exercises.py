"""Notebook 05's exercises, checked against the live dispatch tables of the installed torch."""

from __future__ import annotations

import torch

from course.dispatch.registration import define_op
from course.dispatch.registry import backend_kernel, lookup
from course.dispatch.tables import call_path
from course.exercises import Exercise, Verdict, failed, passed, register

# ---- exercises "05.*" ------------------------------------------------------------------------

EMA_SQ_SCHEMA = "course05_check::ema_sq(Tensor avg_sq, Tensor grad, float beta) -> Tensor"


def _check_delegate(answer) -> Verdict:
    expected = {
        "delegate": lookup("addcdiv_").structured_delegate,
        "MPS": backend_kernel("addcdiv_", "MPS"),
    }
    if not isinstance(answer, dict) or set(answer) != set(expected):
        return failed(
            "answer with a dict with exactly the keys 'delegate' and 'MPS'", answer, expected
        )
    if answer["delegate"] != expected["delegate"]:
        return failed(
            "'delegate' should be the overload named in addcdiv_'s structured_delegate "
            "field (look it up with lookup('addcdiv_'))",
            answer["delegate"],
            expected["delegate"],
        )
    if answer["MPS"] != expected["MPS"]:
        return failed(
            "'MPS' should be the kernel in the *delegate's* dispatch table for MPS "
            "(addcdiv_ itself has no dispatch table)",
            answer["MPS"],
            expected["MPS"],
        )
    return passed(
        f"addcdiv_ reuses {expected['delegate']}'s kernel; on MPS that is "
        f"{expected['MPS']} in PointwiseOps.mm, the sibling of addcmul's broken kernel."
    )


def _delegate_reference():
    return {
        "delegate": lookup("addcdiv_").structured_delegate,
        "MPS": backend_kernel("addcdiv_", "MPS"),
    }


def _check_call_order(answer) -> Verdict:
    steps = call_path("addcmul_", torch.zeros(2, 3, requires_grad=True))
    expected = [s.key for s in steps]
    if not isinstance(answer, (list, tuple)) or not all(isinstance(k, str) for k in answer):
        return failed(
            "answer with a list of dispatch key names, e.g. ['KeyA', 'KeyB']", answer, expected
        )
    answer = list(answer)
    skipped = [k for k in answer if k not in expected]
    if skipped:
        return failed(
            f"{skipped} never run a kernel here: their entries are fallthroughs, or "
            "the key is excluded on this thread (call_path explains each step)",
            answer,
            expected,
        )
    missing = [k for k in expected if k not in answer]
    if missing:
        return failed(
            f"missing {missing}: each of those runs a kernel on the way down", answer, expected
        )
    if answer != expected:
        return failed(
            "right keys, wrong order: the dispatcher runs the highest-priority key "
            "first, and the backend kernel last",
            answer,
            expected,
        )
    return passed(
        "autograd records the graph, ADInplaceOrView bumps the version counter, "
        "then the CPU kernel computes."
    )


def _call_order_reference():
    return ["AutogradCPU", "ADInplaceOrView", "CPU"]


def _check_custom_op(answer) -> Verdict:
    if not (isinstance(answer, tuple) and len(answer) == 2 and all(map(callable, answer))):
        return failed(
            "answer with a pair of functions: (cpu_kernel, fake_kernel)",
            answer,
            "(cpu_kernel, fake_kernel)",
        )
    custom = define_op(EMA_SQ_SCHEMA, answer[0], answer[1])
    try:
        return _ema_sq_verdict(custom.op)
    finally:
        custom.remove()


def _ema_sq_verdict(op) -> Verdict:
    gen = torch.Generator().manual_seed(0)  # seeded, without touching the global RNG
    samples = (
        ("contiguous", torch.rand(3, 4, generator=gen)),
        ("transposed", torch.rand(4, 3, generator=gen).t()),
    )
    for layout, avg_sq in samples:
        grad, before = torch.randn(3, 4, generator=gen), avg_sq.clone()
        result = op(avg_sq, grad, 0.9)
        expected = 0.9 * before + 0.1 * grad * grad
        if not torch.equal(avg_sq, before):
            return failed(
                "your CPU kernel changed avg_sq in place, but the schema "
                "`Tensor avg_sq` (no `(a!)`) promises it is only read",
                "avg_sq modified",
                "avg_sq unchanged, a new tensor returned",
            )
        if result.shape != expected.shape or not torch.allclose(result, expected):
            return failed(
                f"wrong values on a {layout} avg_sq",
                [round(v, 4) for v in result.flatten()[:3].tolist()],
                [round(v, 4) for v in expected.flatten()[:3].tolist()],
            )
        fake = op(
            torch.empty_strided(avg_sq.shape, avg_sq.stride(), device="meta"),
            torch.empty(grad.shape, device="meta"),
            0.9,
        )
        real = (tuple(result.shape), result.stride(), result.dtype)
        if (tuple(fake.shape), fake.stride(), fake.dtype) != real:
            return failed(
                f"on a {layout} avg_sq your fake kernel's output (shape, stride, dtype) "
                "differs from the real one's; torch.empty_like(avg_sq) keeps its layout",
                (tuple(fake.shape), fake.stride(), fake.dtype),
                real,
            )
    # Only the tests that concern a custom op's own registrations: the aot_dispatch tests also
    # poke every registered device, and the emulated one has no RNG state to save.
    torch.library.opcheck(
        op,
        (torch.rand(4, 3, generator=gen).t(), torch.randn(3, 4, generator=gen), 0.9),
        test_utils=("test_schema", "test_autograd_registration", "test_faketensor"),
    )
    return passed(
        "torch.library.opcheck agrees: schema, CPU kernel and fake kernel are "
        "consistent, on contiguous and transposed inputs."
    )


def _custom_op_reference():
    def cpu_kernel(avg_sq, grad, beta):
        return beta * avg_sq + (1 - beta) * grad * grad

    def fake_kernel(avg_sq, grad, beta):
        return torch.empty_like(avg_sq)

    return cpu_kernel, fake_kernel


register(
    Exercise(
        "05.structured_delegate",
        "Which out= overload does `addcdiv_` delegate to, and which kernel serves it on MPS? "
        "Answer {'delegate': ..., 'MPS': ...}.",
        _check_delegate,
        "lookup('addcdiv_').structured_delegate names the overload; backend_kernel(name, 'MPS') "
        "follows the delegate to its dispatch table.",
        _delegate_reference,
        (
            lambda: {"delegate": "addcdiv", "MPS": "addcdiv_out_mps"},
            lambda: {"delegate": "addcdiv.out", "MPS": "addcdiv_out"},
            lambda: {"delegate": "addcmul.out", "MPS": "addcmul_out_mps"},
        ),
    )
)
register(
    Exercise(
        "05.call_order",
        "`x.addcmul_(a, b)` with x a CPU tensor that requires grad: list the dispatch keys whose "
        "kernels run, in the order they run.",
        _check_call_order,
        "dispatch_keys(x) lists the candidates, highest priority first; call_path('addcmul_', x) "
        "shows which of them actually run a kernel.",
        _call_order_reference,
        (
            lambda: ["CPU", "ADInplaceOrView", "AutogradCPU"],
            lambda: ["AutocastCPU", "AutogradCPU", "ADInplaceOrView", "CPU"],
            lambda: ["AutogradCPU", "CPU"],
        ),
    )
)
register(
    Exercise(
        "05.custom_op",
        f"Write a CPU kernel and a fake kernel for `{EMA_SQ_SCHEMA}` (Adam's second moment, "
        "beta * avg_sq + (1 - beta) * grad**2, as a pure op). Answer (cpu_kernel, fake_kernel).",
        _check_custom_op,
        "The CPU kernel must return a new tensor (no in-place ops on avg_sq); the fake kernel only "
        "allocates an output with the real output's shape, dtype and strides: torch.empty_like.",
        _custom_op_reference,
        (
            lambda: (
                lambda a, g, b: a.mul_(b).addcmul_(g, g, value=1 - b),
                lambda a, g, b: torch.empty_like(a),
            ),
            lambda: (lambda a, g, b: b * a + g * g, lambda a, g, b: torch.empty_like(a)),
            lambda: (lambda a, g, b: b * a + (1 - b) * g * g, lambda a, g, b: a.new_empty(a.shape)),
        ),
    )
)
