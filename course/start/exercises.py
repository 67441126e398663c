"""The start notebook's warm-ups: the exercise and prediction mechanics, on the emulated device.

Nothing here is about the investigation yet: putting a tensor on a device, reading a tensor's
device type, and predicting what PyTorch does with tensors on two devices. Each shows one shape
of exercise the course uses (an answer, a function, a prediction).
"""

from __future__ import annotations

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


def _check_on_emps(tensor: object) -> Verdict:
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
        wrong_answers=(
            lambda: torch.ones(3),
            lambda: [1.0, 2.0],
            lambda: torch.ones(3, device="meta"),
            lambda: "emps",
        ),
    )
)


def _device_variants() -> list[tuple[str, torch.Tensor]]:
    """Tensors on every device a learner's machine surely has (the CPU, emps, meta)."""
    return [
        ("a CPU tensor", torch.zeros(2)),
        ("a tensor on emps", torch.zeros(2, device=emps.DEVICE)),
        ("a tensor on the meta device (shapes only, no data)", torch.zeros(2, device="meta")),
    ]


def _check_device_type(device_type: object) -> Verdict:
    if not callable(device_type):
        return failed("give a function of one tensor", type(device_type).__name__, "a function")
    for label, tensor in _device_variants():
        answer, expected = device_type(tensor), tensor.device.type
        if not isinstance(answer, str):
            why = f"the answer must be a string, not a {type(answer).__name__}"
        elif answer == str(tensor.device) != expected:
            why = (
                "the type is the device's name without its index (emps:0 is a device of type emps)"
            )
        elif answer != expected:
            why = "that is not where this tensor lives"
        else:
            continue
        return failed(f"on {label}: {why}", repr(answer), repr(expected))
    return passed("right on the CPU, emps and meta: every tensor carries its device.")


def _reference_device_type():
    def device_type(t):
        return t.device.type

    return device_type


register(
    Exercise(
        name="00.device_type",
        prompt="Write device_type(t): the type of device tensor t lives on ('cpu', 'emps', ...).",
        checker=_check_device_type,
        hint="A tensor's .device is a torch.device; it has a .type and an .index.",
        reference=_reference_device_type,
        wrong_answers=(
            lambda: lambda t: str(t.device),
            lambda: lambda t: t.device,
            lambda: lambda t: "cpu",
        ),
    )
)


MIXED = ("the result is on emps", "the result is on the CPU", "RuntimeError")


def _mixed_devices() -> str:
    """Run it: add a 3-element CPU tensor to a tensor on emps."""
    on_emps = torch.ones(3, device=emps.DEVICE)
    try:
        result = on_emps + torch.ones(3)
    except RuntimeError:
        return MIXED[2]
    return MIXED[0] if result.device.type == "emps" else MIXED[1]


register_prediction(
    Prediction(
        "00.mixed_devices",
        "torch.ones(3, device='emps') + torch.ones(3): what happens?",
        MIXED,
        _mixed_devices,
        "PyTorch never moves data between devices behind your back: an op's tensors must share a "
        "device (a 0-dim CPU tensor, a scalar, is the one exception). Moving data is always an "
        "explicit .to(...), which is why the device is worth checking whenever results surprise.",
    )
)
