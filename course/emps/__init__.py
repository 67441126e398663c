"""An emulated Apple-MPS backend with the historical bugs, reachable on any machine.

Use it the way you would use "mps":

    from course import emps
    model.to(emps.DEVICE)            # or model.to("emps")
    with emps.use_profile("2.4-macos14"):
        ...                           # addcmul_/addcdiv_ fixed, random ops still broken
    with emps.record() as log:
        optimizer.step()              # log.events: every emulated kernel call

See `course.emps.device` for how it plugs into PyTorch's dispatcher, `course.emps.ops` for
which op takes which path, `course.emps.mps_kernels` for the working and broken kernel patterns,
`course.emps.optim_paths` for `foreach=True` / `fused=True` (what real MPS did, with sources),
`course.emps.storage` for device memory (`data_ptr()`, storages, `torch.save`/`torch.load`),
`course.emps.host_ops` for the layers that run whole as on the CPU (LSTM, GRU, attention),
`course.emps.generators` for `torch.Generator(device="emps")`, and `course.emps.profiles` for
the version history. The active profile and the recorders belong to the process, one thread at
a time (Note in `course.emps.threads`). Needs torch >= 2.10.
"""

from __future__ import annotations

import torch

from course.emps.backend import (
    Backend,
    current_backend,
    current_profile,
    use_backend,
    use_profile,
)
from course.emps.device import DEVICE, FLOAT64_MESSAGE, EmulatedTensor, register
from course.emps.mps_kernels import (
    KernelCall,
    gather_compute_scatter,
    output_placeholder,
    write_through_placeholder,
)
from course.emps.placeholder import OutputPlaceholder, Placeholder
from course.emps.profiles import (
    ADAM_FAMILIES,
    DEFAULT_PROFILE,
    FIXED_MACOS14,
    MACOS15,
    PROFILES,
    RANDOM_FAMILIES,
    TORCH_2_2_1,
    TORCH_2_4,
    Profile,
    get_profile,
)
from course.emps.record import KernelEvent, Recorder, record

register()

__all__ = [
    "ADAM_FAMILIES",
    "DEFAULT_PROFILE",
    "DEVICE",
    "FIXED_MACOS14",
    "FLOAT64_MESSAGE",
    "MACOS15",
    "PROFILES",
    "RANDOM_FAMILIES",
    "TORCH_2_2_1",
    "TORCH_2_4",
    "Backend",
    "EmulatedTensor",
    "KernelCall",
    "KernelEvent",
    "OutputPlaceholder",
    "Placeholder",
    "Profile",
    "Recorder",
    "current_backend",
    "current_profile",
    "gather_compute_scatter",
    "get_profile",
    "output_placeholder",
    "record",
    "register",
    "use_backend",
    "use_profile",
    "write_through_placeholder",
]


def redesigned_backend(profile: str | Profile = DEFAULT_PROFILE) -> Backend:
    """A backend whose every kernel uses OutputPlaceholder: no lost writes, on any profile."""
    return Backend(get_profile(profile), design="output-placeholder")


def torch_device() -> torch.device:
    """The emulated device as a torch.device."""
    return torch.device(DEVICE)
