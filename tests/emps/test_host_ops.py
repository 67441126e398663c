"""Recurrent layers and attention run whole on the CPU: bitwise the CPU's on the device."""

from __future__ import annotations

import torch
from torch import nn

from course import emps
from course.emps import host_ops


def _run(device: str) -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    lstm = nn.LSTM(3, 5, num_layers=2).to(device)
    x = torch.randn(4, 2, 3).to(device).requires_grad_()
    out, _ = lstm(x)
    q = out.transpose(0, 1)
    attended = nn.functional.scaled_dot_product_attention(q, q, q)
    attended.square().sum().backward()
    return {"out": out.detach().cpu(), "attended": attended.detach().cpu(), "grad": x.grad.cpu()}


def test_lstm_and_attention_on_the_device_equal_the_cpu_bitwise():
    with emps.record() as log:
        on_device = _run(emps.DEVICE)
    on_cpu = _run("cpu")
    for key, want in on_cpu.items():
        assert on_device[key].view(torch.int32).equal(want.view(torch.int32)), key
    assert not log.lost()


def test_every_host_op_is_an_installed_overload():
    assert len(host_ops.overloads()) == len(host_ops.HOST_OPS)
