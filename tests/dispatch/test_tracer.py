"""The op tracer sees what one Adam step really runs, with each output's layout."""

from __future__ import annotations

import torch

from course.dispatch.tracer import OpTracer, optimizer_state_names, trace


def _transposed_adam_step():
    torch.manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(3, 4).t().clone())  # stride (1, 4): like the encoder
    optimizer = torch.optim.Adam([weight], lr=1e-3)
    weight.grad = torch.randn(4, 3)
    optimizer.step()  # the first step creates the state
    weight.grad = torch.randn(4, 3)
    names = optimizer_state_names(optimizer, {"encoder.weight": weight})
    return weight, trace(optimizer.step, names)


def test_adam_step_records_the_four_ops_with_their_strides():
    weight, records = _transposed_adam_step()
    assert weight.stride() == (1, 4) and not weight.is_contiguous()
    by_op = {r.op: r for r in records}
    adam_ops = {"aten::lerp_.Scalar", "aten::mul_.Tensor", "aten::addcmul_", "aten::addcdiv_"}
    assert adam_ops <= set(by_op)
    assert by_op["aten::lerp_.Scalar"].output == "encoder.weight.exp_avg"
    for op, name in (
        ("aten::addcmul_", "encoder.weight.exp_avg_sq"),
        ("aten::addcdiv_", "encoder.weight"),
    ):
        record = by_op[op]
        assert record.output == name and record.in_place
        assert record.stride == (1, 4) and not record.contiguous and record.shape == (4, 3)


def test_state_names_skip_the_step_counter():
    weight, _ = _transposed_adam_step()
    optimizer = torch.optim.Adam([weight])
    weight.grad = torch.ones_like(weight)
    optimizer.step()
    names = optimizer_state_names(optimizer, {"w": weight})
    assert set(names) == {"w", "w.exp_avg", "w.exp_avg_sq"}


def test_tracer_skips_profiler_ops_and_can_be_used_directly():
    with OpTracer() as tracer:
        torch.ones(2).mul_(2)
    assert [r.op for r in tracer.records] == ["aten::ones", "aten::mul_.Tensor"]
