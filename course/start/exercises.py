"""The start notebook's warm-ups: the exercise and prediction mechanics, on the emulated device.

Nothing here is about the investigation yet: putting a tensor on a device, reading a tensor's
device type, and predicting what PyTorch does with tensors on two devices. Each shows one shape
of exercise the course uses (an answer, a function, a prediction). Even a warm-up says what is
wrong with an answer, not only that it is wrong: a device handed over instead of a tensor, a
printed value instead of a returned one.
"""

from __future__ import annotations

import numpy as np
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

# ---- 00.on_emps ------------------------------------------------------------------------------

# What a learner hands over instead of a tensor, and what to say about each (first match wins).
NOT_A_TENSOR: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (torch.device, "that is a device, not a tensor on it: make a tensor and .to('emps') it"),
    (str, "that is the device's name: hand the checker a tensor that lives there"),
    (
        torch.nn.Module,
        "that is a module, not a tensor: a module's parameters are tensors (try its .weight)",
    ),
    ((list, tuple), "a list is not a tensor: check takes one tensor (torch.tensor(...) makes one)"),
    (np.ndarray, "a NumPy array lives on the CPU only: hand the checker a torch tensor"),
)


def _not_a_tensor(answer: object) -> str:
    for kind, why in NOT_A_TENSOR:
        if isinstance(answer, kind):
            return why
    if callable(answer):
        return "that is a function or method, not its result: did you forget the parentheses?"
    return "hand the checker a tensor"


def _check_on_emps(tensor: object) -> Verdict:
    if not isinstance(tensor, torch.Tensor):
        return failed(_not_a_tensor(tensor), type(tensor).__name__, "torch.Tensor")
    if tensor.device.type == "meta":
        return failed(
            "'meta' is a device that holds shapes but no data; the emulated device is 'emps'",
            tensor.device,
            emps.DEVICE,
        )
    if tensor.device.type != "emps":
        return failed(
            "the tensor is not on the emulated device yet; use .to('emps')",
            tensor.device,
            emps.DEVICE,
        )
    return passed(f"on {tensor.device}: the same call you would write for 'mps' on a Mac.")


def _reference_on_emps():
    my_tensor = torch.ones(3).to("emps")
    return my_tensor


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
            lambda: torch.device("emps"),
            lambda: torch.nn.Linear(2, 2).to("emps"),
            lambda: torch.ones(3).to,
            lambda: np.ones(3),
        ),
    )
)

# ---- 00.device_type --------------------------------------------------------------------------


def _device_variants() -> list[tuple[str, torch.Tensor]]:
    """Tensors on every device a learner's machine surely has (the CPU, emps, meta)."""
    return [
        ("a CPU tensor", torch.zeros(2)),
        ("a tensor on emps", torch.zeros(2, device=emps.DEVICE)),
        ("a tensor on the meta device (shapes only, no data)", torch.zeros(2, device="meta")),
    ]


def _not_a_string(answer: object) -> str:
    if answer is None:
        return "your function returned None: return the string (print only shows it)"
    if isinstance(answer, torch.device):
        return "that is the torch.device itself: its .type is the string"
    return f"the answer must be a string, not a {type(answer).__name__}"


def _wrong_type(answer: str, tensor: torch.Tensor) -> str:
    """Why a string answer is not the tensor's device type."""
    if answer == str(tensor.device):
        return "the type is the device's name without its index (emps:0 is a device of type emps)"
    if answer == repr(tensor.device):
        return "that is the device's repr: its .type is the string inside it"
    if answer == tensor.type():
        return "t.type() names the tensor's kind and dtype (a FloatTensor), not its device"
    if answer.lower() == tensor.device.type:
        return "device types are written in lower case, as torch writes them"
    return "that is not where this tensor lives"


def _check_device_type(device_type: object) -> Verdict:
    if not callable(device_type):
        return failed("give a function of one tensor", type(device_type).__name__, "a function")
    for label, tensor in _device_variants():
        answer, expected = device_type(tensor), tensor.device.type
        if answer == expected and isinstance(answer, str):
            continue
        why = _wrong_type(answer, tensor) if isinstance(answer, str) else _not_a_string(answer)
        return failed(f"on {label}: {why}", repr(answer), repr(expected))
    return passed("right on the CPU, emps and meta: every tensor carries its device.")


def _reference_device_type():
    def device_type(t):
        return t.device.type

    return device_type


def _cpu_or_emps():
    def device_type(t):
        return "cpu" if t.is_cpu else "emps"  # only the two devices the learner has met

    return device_type


def _printed():
    def device_type(t):
        print(t.device.type)

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
            _cpu_or_emps,
            lambda: lambda t: t.type(),
            _printed,
            lambda: lambda t: t.device.type.upper(),
            lambda: lambda t: repr(t.device),
        ),
    )
)

# ---- 00.mixed_devices ------------------------------------------------------------------------

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
        answer_words=("never moves data", "must share a device", "same device"),
    )
)
