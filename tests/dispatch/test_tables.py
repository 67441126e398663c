"""Live dispatch tables, call paths, kernel overrides and custom ops, and the explorer widget."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.dispatch.explorer import dispatch_explorer
from course.dispatch.registration import (
    define_op,
    override_kernel,
    parse_key,
    placeholder_addcmul_,
    qualified,
)
from course.dispatch.tables import (
    active_keys,
    call_path,
    computed_table,
    dispatch_keys,
    key_summary,
    keyset_rows,
    registered_kernels,
)
from course.errors import CourseError


def _active_cpu(op: str) -> list[str]:
    return [k.file for k in registered_kernels(op) if k.key == "CPU" and k.active]


def test_registered_kernels_name_the_generated_files():
    kernels = {k.key: k for k in registered_kernels("addcmul_") if k.active}
    assert kernels["CPU"].file.startswith("RegisterCPU") and kernels["CPU"].language == "C++"
    assert kernels["ADInplaceOrView"].file.startswith("ADInplaceOrViewType")
    assert "Autograd[alias]" in kernels


def test_computed_table_marks_fallthroughs():
    table = computed_table("aten::addcmul_")
    assert table["AutogradCPU"].kind == "autograd kernel"
    assert table["AutocastCPU"].fallthrough and not table["CPU"].fallthrough


def test_unknown_ops_get_did_you_mean():
    with pytest.raises(CourseError, match="Did you mean: aten::addcmul_"):
        qualified("addcmull_")
    with pytest.raises(CourseError, match="no operator 'nosuchns::op'"):
        registered_kernels("nosuchns::op")


def test_key_sets_of_cpu_grad_and_emulated_tensors():
    cpu, grad = torch.zeros(2), torch.zeros(2, requires_grad=True)
    assert dispatch_keys(cpu) == dispatch_keys(grad)  # autograd's key is there either way
    assert dispatch_keys(cpu)[-1] == "CPU" and "AutogradCPU" in dispatch_keys(cpu)
    keys = dispatch_keys(torch.zeros(2, device=emps.DEVICE))
    assert {"PrivateUse1", "Python", "AutogradPrivateUse1"} <= set(keys)
    assert keys.index("Python") < keys.index("PrivateUse1")  # the subclass sees calls first
    assert "AutocastCPU" not in active_keys(cpu)  # excluded unless autocast is on
    rows = keyset_rows({"x": cpu})
    assert rows[0]["device"] == "cpu" and rows[0]["dispatch keys (highest priority first)"]


def test_call_paths():
    grad = torch.zeros(2, 3, requires_grad=True)
    assert [s.key for s in call_path("addcmul_", grad)] == ["AutogradCPU", "ADInplaceOrView", "CPU"]
    emulated = [s.key for s in call_path("addcmul_", torch.zeros(2, device=emps.DEVICE))]
    assert emulated[-1] == "Python" and "AutogradPrivateUse1" in emulated
    assert call_path("addcmul_", torch.zeros(2, device="meta"))[-1].key == "Meta"


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


def test_explorer_redraws_and_reports_unknown_names():
    panel = dispatch_explorer()
    assert panel.error == "" and panel.image.value
    assert "addcmul_out_mps" in panel.text.value and "RegisterCPU" in panel.text.value
    cpu_image = panel.image.value
    panel.controls["tensor"].value = "emps tensor (emulated MPS)"
    assert panel.error == "" and panel.image.value != cpu_image
    panel.controls["op"].value = "addcmull_"
    assert "Did you mean: addcmul_" in panel.error
    panel.controls["op"].value = "mul_.Tensor"
    assert panel.error == "" and "mul.out" in panel.text.value
