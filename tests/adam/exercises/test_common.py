"""What 03's checkers share: a ready-made answer seen however wrapped, and each op call's facts."""

from __future__ import annotations

import torch

from course import emps
from course.adam.exercises.common import OpWatch, Writes, layouts
from course.layout.named import laid_out


def test_an_op_call_records_device_profile_layouts_and_a_zero_start():
    out = laid_out(torch.zeros(4, 3), "transposed", emps.DEVICE)
    grad = laid_out(torch.ones(4, 3), "step-sliced", emps.DEVICE)
    with emps.use_profile(emps.TORCH_2_4), OpWatch() as watch:
        out.addcmul_(grad, grad, value=0.5)
        torch.ones(2).mul_(2.0)
    device, cpu = watch.calls
    assert (device.op, device.device, device.profile) == ("addcmul_", "emps", "2.4-macos14")
    assert device.output == {"transposed"} and device.inputs == ({"step-sliced"},) * 2
    assert device.from_zeros and device.laid_out_as("transposed", "step-sliced")
    assert (cpu.op, cpu.device, cpu.profile, cpu.inputs) == ("mul_", "cpu", "", ())


def test_a_transposed_view_inside_its_storage_has_two_layouts():
    view = torch.zeros(5, 4)[1:].T
    assert layouts(view) == {"transposed", "storage-offset"}


def test_writes_are_recorded_per_memory_under_the_op_s_base_name():
    param, other = torch.zeros(3, 2).T, torch.ones(2, 3)
    with Writes() as writes:
        param.addcdiv_(other, other, value=1.0)
        torch.addcdiv(param, other, other, out=param.detach())
        torch._foreach_addcdiv_([param], [other], [other], 1.0)
        param.sub_(other)
        (other + 1).mul_(2)  # a temporary: not the parameter's memory
    assert writes.into(param) == ["addcdiv", "addcdiv", "addcdiv", "sub"]
    assert writes.into(other) == []
