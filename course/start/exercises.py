"""The start notebook's warm-ups: the exercise and prediction mechanics, on the emulated device.

Nothing here is about the investigation yet: a tensor put on a device (an answer), a tensor's
device type read (a function), what torch does with tensors on two devices (a prediction). Even a
warm-up says what is wrong with an answer: a device instead of a tensor, a value printed.
"""

from __future__ import annotations

import numpy as np
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from course import emps
from course.exercises import Exercise, Prediction, Verdict, failed, passed
from course.exercises.registry import register, register_prediction

# ---- 00.on_emps ------------------------------------------------------------------------------

# What a learner hands over instead of a tensor, and what to say about each (first match wins).
NOT_A_TENSOR: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (torch.device, "that is a device, not a tensor on it: make a tensor and .to('emps') it"),
    (str, "that is the device's name: hand the checker a tensor that lives there"),
    (
        torch.nn.Module,
        "that is a module, not a tensor: a module's parameters are tensors (try its .weight)",
    ),
    (torch.Size, "that is a tensor's shape (.shape), not the tensor: hand over the tensor itself"),
    (torch.dtype, "that is a dtype (the kind of number a tensor holds), not a tensor"),
    (
        (torch.UntypedStorage, torch.TypedStorage),
        "that is a tensor's storage (its raw memory), not the tensor: hand over the tensor",
    ),
    (bool, "that is a yes/no answer (a bool), not a tensor: hand over the tensor itself"),
    (
        (int, float, np.generic),
        "that is a plain number (.item() or .sum() of it?), not a tensor: hand over the tensor",
    ),
    (dict, "a dict is not a tensor: check takes one tensor, not a container of them"),
    (tuple, "a tuple is not a tensor: check takes one tensor, not a container of them"),
    (
        list,
        "a list is not a tensor: check takes one tensor, not a list (torch.tensor(...) makes one "
        "from numbers)",
    ),
    (np.ndarray, "a NumPy array lives on the CPU only: hand the checker a torch tensor"),
    (type, "that is a class, not a tensor made with it: hand over a tensor"),
)


def _not_a_tensor(answer: object) -> str:
    if isinstance(answer, str) and answer.startswith("tensor("):
        return "that is the tensor printed as text (str(), repr()): hand over the tensor itself"
    why = next((why for kind, why in NOT_A_TENSOR if isinstance(answer, kind)), None)
    if why is None and callable(answer):
        return "that is a function or method, not its result: did you forget the parentheses?"
    return why or "hand the checker a tensor"


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
            "the tensor is not on the emulated device yet: .to('emps') returns a new tensor "
            "there and leaves the one it is called on where it is, so keep what it returns",
            tensor.device,
            emps.DEVICE,
        )
    return passed(f"on {tensor.device}: the same call you would write for 'mps' on a Mac.")


register(
    Exercise(
        name="00.on_emps",
        prompt="Create any tensor on the emulated device 'emps'.",
        checker=_check_on_emps,
        hint="Tensors move between devices with .to(device); the device's name is 'emps'.",
        minutes=2,
    )
)

# ---- 00.device_type --------------------------------------------------------------------------


def _stand_in(device: str) -> torch.Tensor:
    """A tensor that reports `device` without the hardware: a FakeTensor holds metadata only.

    Why: a function that knows only this machine's devices, or a list of them (is_cuda, is_mps,
    ... and "emps" for the rest), or trims "emps:0" by cutting ":0", a digit or a few characters,
    must meet a device and an index it did not expect: "mps", "xpu", "cuda:10"."""
    with FakeTensorMode():
        return torch.zeros(2, device=device)


def _device_variants() -> list[tuple[str, torch.Tensor]]:
    """Tensors on the CPU, emps and meta, and stand-ins on mps, xpu and two CUDA GPUs."""
    return [
        ("a CPU tensor", torch.zeros(2)),
        ("a tensor on emps", torch.zeros(2, device=emps.DEVICE)),
        ("a tensor on the meta device (shapes only, no data)", torch.zeros(2, device="meta")),
        ("a tensor on a Mac's mps device (a stand-in: no Mac needed)", _stand_in("mps")),
        ("a tensor on the second CUDA GPU, cuda:1 (a stand-in)", _stand_in("cuda:1")),
        ("a tensor on an Intel GPU, xpu (a stand-in)", _stand_in("xpu")),
        ("a tensor on the eleventh CUDA GPU, cuda:10 (a stand-in)", _stand_in("cuda:10")),
    ]


def _wrong_type(answer: str, tensor: torch.Tensor) -> str:
    """Why a string answer is not the tensor's device type."""
    if answer == str(tensor.device):
        return (
            f"the type is the device's name without its index ({tensor.device} is a device of "
            f"type {tensor.device.type})"
        )
    if answer == repr(tensor.device):
        return "that is the device's repr: its .type is the string inside it"
    if answer == repr(tensor.device.type):
        return "your string has quotes in it (a repr): return the .type string itself"
    if answer == tensor.type():
        return "t.type() names the tensor's kind and dtype (a FloatTensor), not its device"
    if answer.lower() == tensor.device.type:
        return "device types are written in lower case, as torch writes them"
    if answer.startswith(tensor.device.type):
        return "that is the device's name, cut short but not to its type: ask the device its .type"
    if answer in {t.device.type for _, t in _device_variants()}:
        return (
            "that is another device's type: a function that lists the devices it knows (is_cuda, "
            "is_cpu, ...) answers wrongly for one it does not; the tensor's own .device knows"
        )
    return "that is not where this tensor lives"


def _not_a_string(device_type, answer: object, tensor: torch.Tensor) -> str:
    """Why an answer that is no string is not the device type.

    The device's index (.index, get_device()) is None on the CPU, as a function that prints
    instead of returning gives, so an index is told apart by asking about emps:0 (index 0)."""
    an_index = answer is None or type(answer) is int
    on_emps = torch.zeros(1, device=emps.DEVICE)
    if (
        an_index
        and answer in (tensor.device.index, tensor.get_device())
        and device_type(on_emps) == 0
    ):
        return (
            "that is the device's index (.index, get_device()): which device of a kind, "
            "not the kind. The type is the string torch.device keeps beside the index"
        )
    if answer is None:
        return "your function returned None: return the string (print only shows it)"
    if isinstance(answer, torch.device):
        return "that is the torch.device itself: its .type is the string"
    if isinstance(answer, torch.Tensor):
        return "that is the tensor itself: its .device knows where it lives"
    return f"the answer must be a string, not a {type(answer).__name__}"


def _check_device_type(device_type: object) -> Verdict:
    if not callable(device_type):
        return failed("give a function of one tensor", type(device_type).__name__, "a function")
    for label, tensor in _device_variants():
        answer, expected = device_type(tensor), tensor.device.type
        if isinstance(answer, str) and answer == expected:
            continue
        if isinstance(answer, str):
            why = _wrong_type(answer, tensor)
        else:
            why = _not_a_string(device_type, answer, tensor)
        return failed(f"on {label}: {why}", repr(answer), repr(expected))
    return passed(
        "right on the CPU, emps, meta, mps, xpu, cuda:1 and cuda:10: every tensor carries its "
        "device."
    )


register(
    Exercise(
        name="00.device_type",
        prompt="Write device_type(t): the type of device tensor t lives on ('cpu', 'emps', ...).",
        checker=_check_device_type,
        hint="A tensor's .device is a torch.device; it has a .type and an .index.",
        minutes=4,
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
