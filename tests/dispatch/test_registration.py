"""Changing dispatch tables with torch.library: overrides that always undo, ops of our own."""

from __future__ import annotations

import pytest
import torch

from course.dispatch.registration import (
    define_op,
    override_kernel,
    parse_key,
    placeholder_addcmul_,
    qualified,
)
from course.dispatch.tables import key_summary, registered_kernels
from course.errors import CourseError


def _active_cpu(op: str) -> list[str]:
    return [k.file for k in registered_kernels(op) if k.key == "CPU" and k.active]


def test_override_changes_the_table_and_restores_it():
    before = registered_kernels("addcmul_")
    out = torch.zeros(3, 2).t()
    with override_kernel("addcmul_", placeholder_addcmul_, "CPU") as record:
        during = registered_kernels("addcmul_")
        assert _active_cpu("addcmul_") == ["registration.py"]
        assert key_summary("addcmul_", "CPU")[-1].endswith("(inactive)")
        assert any(k.key == "CPU" and not k.active for k in during)
        out.addcmul_(torch.ones(2, 3), torch.ones(2, 3))
        assert torch.equal(out, torch.zeros(2, 3))  # the write was lost, as on MPS 2.2.1
        contiguous = torch.zeros(2, 3).addcmul_(torch.ones(2, 3), torch.ones(2, 3))
        assert torch.equal(contiguous, torch.ones(2, 3))
    assert record.calls == 2
    assert registered_kernels("addcmul_") == before
    out.addcmul_(torch.ones(2, 3), torch.ones(2, 3))
    assert torch.equal(out, torch.ones(2, 3))


def test_override_is_restored_after_an_exception():
    before = registered_kernels("addcmul_")
    with pytest.raises(ZeroDivisionError), override_kernel("addcmul_", placeholder_addcmul_):
        _ = 1 / 0
    assert registered_kernels("addcmul_") == before


def test_override_rejects_bad_input():
    with (
        pytest.raises(CourseError, match="not a dispatch key"),
        override_kernel("addcmul_", placeholder_addcmul_, "GPU"),
    ):
        pass
    with pytest.raises(CourseError, match="must be a function"), override_kernel("addcmul_", 42):
        pass
    assert parse_key("emps") == "PrivateUse1"


def _ema_sq(avg_sq, grad, beta):
    return beta * avg_sq + (1 - beta) * grad * grad


def test_define_op_can_be_rerun_and_removed():
    schema = "course05_test::ema_sq(Tensor avg_sq, Tensor grad, float beta) -> Tensor"
    for _ in range(2):  # a notebook cell run twice
        custom = define_op(schema, _ema_sq, lambda a, g, b: torch.empty_like(a))
    x = torch.ones(2, 3)
    assert torch.allclose(custom.op(x, x, 0.5), x)
    assert custom.op(x.to("meta"), x.to("meta"), 0.5).device.type == "meta"
    assert {k.key for k in registered_kernels("course05_test::ema_sq")} >= {"CPU", "Meta"}
    custom.remove()
    with pytest.raises(CourseError, match="no operator"):
        qualified("course05_test::ema_sq")


def test_define_op_with_autograd():
    def backward(ctx, grad_out):
        return ctx.beta * grad_out, 2 * (1 - ctx.beta) * ctx.grad * grad_out, None

    def setup_context(ctx, inputs, output):
        ctx.grad, ctx.beta = inputs[1], inputs[2]

    custom = define_op(
        "course05_test::ema_sq_ad(Tensor avg_sq, Tensor grad, float beta) -> Tensor",
        _ema_sq,
        backward=backward,
        setup_context=setup_context,
    )
    try:
        a = torch.rand(3, 2, dtype=torch.float64, requires_grad=True)
        g = torch.rand(3, 2, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(lambda a, g: custom.op(a, g, 0.9), (a, g))
    finally:
        custom.remove()


def test_define_op_rejects_bad_schemas():
    with pytest.raises(CourseError, match="own lower-case namespace"):
        define_op("aten::mine(Tensor x) -> Tensor", _ema_sq)
    with pytest.raises(CourseError, match="own lower-case namespace"):
        define_op("no_namespace(Tensor x) -> Tensor", _ema_sq)
