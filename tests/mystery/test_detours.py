"""Detours: every copy from the device to the host and every op on CPU values while active,
and nothing the CPU legitimately does during a training step."""

from __future__ import annotations

import torch

from course import emps
from course.mystery.detours import Detours


def test_copies_to_the_host_are_recorded_with_the_op_and_shape():
    x = torch.arange(6.0).reshape(2, 3).to(emps.DEVICE)
    with Detours() as watch:
        x.cpu()
        x.sum().item()
        torch.empty(2, 3).copy_(x)
    assert [str(d) for d in watch.found] == [
        ".to('cpu') of a (2, 3) tensor",
        ".item() (or float(), bool()) of a () tensor",
        "copy_ into a CPU tensor of a (2, 3) tensor",
    ]


def test_values_computed_on_the_cpu_are_recorded_even_when_read_through_a_list():
    x = torch.arange(6.0).reshape(2, 3).to(emps.DEVICE)
    with Detours() as watch:
        torch.tensor(x.tolist()).relu_()
    assert [d.what for d in watch.found] == [
        "torch.tensor(...) made from Python values on the CPU",
        "relu_ computed on the CPU",
    ]


def test_device_work_step_counters_and_host_masks_are_not_detours():
    x = torch.arange(6.0).reshape(2, 3).to(emps.DEVICE)
    step, mask = torch.tensor(0.0), torch.tensor([True, False])
    with Detours() as watch:
        y = (x * 2).relu_().t().contiguous() + torch.ones(3, 2).to(emps.DEVICE)
        x[mask] = 0.0  # a CPU mask indexes a device tensor, as on CUDA and MPS
        step.add_(1)  # the optimizer's step counter lives on the CPU
        torch.arange(4).flip(0)  # integer bookkeeping
    assert watch.found == [] and y.device.type == "emps"
