"""Random-number generators for the emulated device: `torch.Generator(device="emps")`.

A real MPS device has generators of its own (`torch.Generator(device="mps")`), and seeded code
passes them to random ops (`torch.randn(..., device="mps", generator=g)`,
`nn.init.normal_(w, generator=g)`). PyTorch makes a PrivateUse1 generator through a C++ hook
(`PrivateUse1HooksInterface::getNewGenerator`), which a Python backend cannot register. So
`torch.Generator(device="emps")` is answered here, before PyTorch's C++ runs (see `install`):
it makes an `EmulatedGenerator`, and every other device is left to PyTorch.

An `EmulatedGenerator` is a CPU generator (the device's random ops run the CPU kernels on the
device's CPU memory) that reports device "emps:0" and pickles as one. Seeded draws are
therefore bitwise the CPU's: `torch.randn(3, device="emps", generator=g)` with
`g.manual_seed(0)` equals `torch.randn(3, generator=torch.Generator().manual_seed(0))`.

Two leniencies MPS does not have: a CPU generator given to a random op on the device is used
(MPS raises "Expected a 'mps' device type for generator but found 'cpu'"; the course's own
experiments draw device tensors from private CPU generators), and an emps generator given to a
random op on CPU tensors is used too (the device never sees CPU ops).
"""

from __future__ import annotations

import types

import torch

from course.errors import CourseError

_STATE: dict[str, object] = {"device": None, "check_index": None}


class EmulatedGenerator(torch.Generator):
    """A generator of the emulated device: CPU random streams, device "emps:0"."""

    @property
    def device(self) -> torch.device:
        return _STATE["device"]

    def __reduce__(self):
        _, _, state = super().__reduce__()
        return (torch.Generator, (str(self.device),), state)

    def __repr__(self) -> str:
        return f"<EmulatedGenerator device='{self.device}' seed={self.initial_seed()}>"


def _names_device(device: object, name: str) -> bool:
    if isinstance(device, torch.device):
        return device.type == name
    return isinstance(device, str) and device.split(":")[0] == name


def install(the_device: torch.device, check_index) -> bool:
    """Answer `torch.Generator(device="emps")` from now on; False if this torch cannot.

    `torch.Generator` is a C type, but its metaclass is a Python class of PyTorch's
    (`torch._opaque_base.OpaqueBaseMeta`, set at import by `torch._prims.rng_prims`), and a
    metaclass's `__call__` is what `torch.Generator(...)` runs first. So that metaclass gets a
    `__call__` that answers for "emps" and hands every other call (every other device, every
    other class of that metaclass) to the `__call__` it had.
    """
    _STATE["device"], _STATE["check_index"] = the_device, check_index
    meta = type(torch.Generator)
    if meta is type or not isinstance(meta.__dict__, types.MappingProxyType):
        return False  # a torch whose Generator has no Python metaclass: nothing to hook
    if getattr(meta, "_emps_generator_call", False):
        return True
    name, previous = the_device.type, meta.__call__

    def __call__(cls, *args, **kwargs):
        if cls is torch.Generator and (args or kwargs):
            device = kwargs["device"] if "device" in kwargs else args[0]
            if _names_device(device, name):
                if len(args) + len(kwargs) > 1:
                    raise TypeError("Generator() takes at most 1 argument (device)")
                check_index(torch.device(device))
                return EmulatedGenerator()
        return previous(cls, *args, **kwargs)

    meta.__call__ = __call__
    meta._emps_generator_call = True
    return True


def check_generator(name: str, generator: object) -> None:
    """Refuse what is no generator for a random op on the emulated device. A CPU generator is
    accepted (MPS refuses one: "Expected a 'mps' device type for generator but found 'cpu'"),
    because the course's own experiments draw from private CPU generators on the device."""
    if generator is None or isinstance(generator, torch.Generator):
        return
    raise CourseError(f"generator={generator!r} is not a torch.Generator (in aten::{name})")
