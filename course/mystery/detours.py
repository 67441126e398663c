"""Compute that leaves the device: copies to the host, and work on CPU tensors, during training.

A "fix" that moves an activation to the CPU inside forward (`h.cpu().relu_().to(h.device)`),
or reads a device tensor's values into Python and computes with them, trains healthily on the
buggy device for the wrong reason: the kernel under test never runs on the device, and on a
real Mac the same code would only have moved the problem (and the time) to the CPU. So
`Detours` records, while the scenario's training steps run (forward, backward and the optimizer
step), every copy from the device to the host and every op computed on CPU tensors of values
(floating point, not a scalar); the runner's own reads (the loss value after a step, the weights
before and after) happen outside. Two things the CPU legitimately does there are not detours: the
optimizer's step counters (0-dim tensors) and host masks or indices read by a device op.
`.tolist()` reads device memory without an op the watch can see (the emulated device shares it
with the host), but whatever is computed from the list is a CPU op and is seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from course import emps

_HOST = torch.device("cpu")
_DEVICE_TYPE = torch.device(emps.DEVICE).type


@dataclass(frozen=True)
class Detour:
    """One step of work off the device: which op, on what shape."""

    what: str
    shape: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.what} of a {self.shape} tensor"


def _on_device(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == _DEVICE_TYPE


def _copy_to_host(func, args: tuple, kwargs: dict) -> Detour | None:
    source = args[0] if args else None
    if func is torch.ops.aten._to_copy.default:
        device = kwargs.get("device")
        if device is not None and torch.device(device) == _HOST and _on_device(source):
            return Detour(".to('cpu')", tuple(source.shape))
    elif func is torch.ops.aten.copy_.default and _on_device(args[1]):
        if source.device == _HOST:
            return Detour("copy_ into a CPU tensor", tuple(args[1].shape))
    elif func is torch.ops.aten._local_scalar_dense.default and _on_device(source):
        return Detour(".item() (or float(), bool())", tuple(source.shape))
    return None


def _cpu_compute(func, args: tuple, kwargs: dict) -> Detour | None:
    tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    if any(_on_device(t) for t in tensors) or _to_device(func, kwargs):
        return None  # a device op (host masks and indices included), or a copy onto it
    values = [t for t in tensors if t.is_floating_point() and t.dim() > 0]
    if not values:
        return None  # step counters, integer bookkeeping
    name = func._schema.name.removeprefix("aten::")
    what = _MADE.get(name, f"{name} computed on the CPU")
    return Detour(what, tuple(values[0].shape))


_MADE = {"lift_fresh": "torch.tensor(...) made from Python values on the CPU"}


def _to_device(func, kwargs: dict) -> bool:
    device = kwargs.get("device")
    return (
        func is torch.ops.aten._to_copy.default
        and device is not None
        and (torch.device(device).type == _DEVICE_TYPE)
    )


def detour(func, args: tuple, kwargs: dict) -> Detour | None:
    """The work off the device this op does, if it does any."""
    return _copy_to_host(func, args, kwargs) or _cpu_compute(func, args, kwargs)


class Detours(TorchDispatchMode):
    """Every detour made while active (re-entered once per training step)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[Detour] = []
        self.watch = None  # check_fix's seal: called on every op of the training steps

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.watch is not None:
            self.watch()
        found = detour(func, args, kwargs)
        if found is not None:
            self.found.append(found)
        return func(*args, **kwargs)
