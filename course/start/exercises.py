"""The start notebook's warm-up exercise: put a tensor on the emulated device."""

from __future__ import annotations

import torch

from course import emps
from course.exercises import Exercise, failed, passed, register


def _check_on_emps(tensor: object) -> object:
    if not isinstance(tensor, torch.Tensor):
        return failed("hand the checker a tensor", type(tensor).__name__, "torch.Tensor")
    if tensor.device.type != "emps":
        return failed(
            "the tensor is not on the emulated device yet; use .to('emps')",
            tensor.device,
            emps.DEVICE,
        )
    return passed(f"on {tensor.device}: the same call you would write for 'mps' on a Mac.")


def _reference_on_emps():
    return torch.ones(3).to("emps")


register(
    Exercise(
        name="00.on_emps",
        prompt="Create any tensor on the emulated device 'emps'.",
        checker=_check_on_emps,
        hint="Tensors move between devices with .to(device); the device's name is 'emps'.",
        reference=_reference_on_emps,
        wrong_answers=(lambda: torch.ones(3), lambda: [1.0, 2.0]),
    )
)
