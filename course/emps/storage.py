"""The emulated device's memory: storages, data pointers, checkpoints.

An emps tensor keeps its values in a CPU tensor (`EmulatedTensor.inner`). Code a learner types
also asks for the device memory behind a tensor: `x.data_ptr()` to see whether two tensors
alias, `x.untyped_storage()`, `torch.save` keeping a view's storage shared with its base,
`torch.load(f, map_location="emps")`. So the device gives its tensors storages:

- A *device storage* is a CPU storage's memory seen as emps memory: the same address and size,
  device "emps:0". It keeps its CPU storage (its *host*) alive, and there is one per host, so a
  view and its base report the same storage, and `data_ptr()` is the host's address plus the
  offset, as on any device.
- `set_` onto a device storage (how `torch.load`, `storage.cpu()` and `copy.deepcopy` build
  tensors) points the tensor's `inner` at the host and gives the wrapper the same metadata.
- `torch.UntypedStorage(n, device="emps")` allocates the host on the CPU (PyTorch would ask the
  device's allocator, which a Python backend does not have: without this it crashes).
- `torch.load` restores storages saved on (or mapped to) "emps" as device storages.

Everything here runs once per storage call, never per op: the dispatch path is untouched.
"""

from __future__ import annotations

import weakref

import torch

from course.errors import CourseError

_HOST = "_emps_host"  # the attribute of a device storage that holds its host (CPU) storage
# host StorageImpl address -> its device storage, while anyone holds that device storage
_DEVICE_STORAGES: weakref.WeakValueDictionary[int, torch.UntypedStorage] = (
    weakref.WeakValueDictionary()
)
# memory address -> the host there, while it lives: PyTorch's C++ also makes device storages
# of its own over device memory (at::from_blob: how pickle writes a storage), without _HOST
_HOSTS: weakref.WeakValueDictionary[int, torch.UntypedStorage] = weakref.WeakValueDictionary()
_CPU_STORAGE_NEW = torch._C.StorageBase.__new__  # what torch.UntypedStorage(...) runs unpatched


def device_storage(host: torch.UntypedStorage, device: torch.device) -> torch.UntypedStorage:
    """The device storage over `host`'s memory: one per host, so every view reports the same."""
    found = _DEVICE_STORAGES.get(host._cdata)
    if (
        found is not None
        and getattr(found, _HOST)._cdata == host._cdata
        and found.data_ptr() == host.data_ptr()  # not since moved by a resize (an out= tensor)
        and found.nbytes() == host.nbytes()
    ):
        return found
    made = torch._C._construct_storage_from_data_pointer(host.data_ptr(), device, host.nbytes())
    setattr(made, _HOST, host)  # the device storage does not own its memory: its host does
    _DEVICE_STORAGES[host._cdata] = made
    _HOSTS[host.data_ptr()] = host
    return made


def host_storage(storage: torch.UntypedStorage) -> torch.UntypedStorage:
    """The CPU storage that holds a storage's bytes (a CPU storage is its own host)."""
    if storage.device.type == "cpu":
        return storage
    host = getattr(storage, _HOST, None)
    if host is None:
        host = _HOSTS.get(storage.data_ptr())
        if host is not None and (
            host.data_ptr() != storage.data_ptr() or host.nbytes() < storage.nbytes()
        ):
            host = None  # that host has moved (resized) since
    if host is None:
        raise CourseError(
            f"this {storage.device} storage was not made by the emulated device, so it has no "
            "memory behind it; use a tensor's own x.untyped_storage() (or torch.UntypedStorage(n, "
            "device='emps'))"
        )
    return host


def set_storage(func, args, kwargs, device: torch.device):
    """`x.set_(...)` for an emps tensor: `inner` takes the new storage, the wrapper its metadata.

    The wrapper's sizes, strides and storage are changed by the CPU kernel of `set_` (a wrapper
    tensor has no kernel of its own for it), so `x` itself changes, as `set_` promises.
    """
    self, *rest = args
    inner = torch.empty(0, dtype=self.dtype)
    func(inner, *[_host_view(value) for value in rest], **kwargs)
    shown = device_storage(inner.untyped_storage(), device)
    torch.ops.aten.set_.source_Storage_storage_offset.redispatch(
        torch._C.DispatchKeySet(torch._C.DispatchKey.CPU),
        self,
        shown,
        inner.storage_offset(),
        inner.size(),
        inner.stride(),
    )
    self.inner = inner
    return self


def _host_view(value: object) -> object:
    """A `set_` source as the CPU sees it: a host storage, or an emps tensor's `inner`."""
    if isinstance(value, torch.UntypedStorage):
        return host_storage(value)
    inner = getattr(value, "inner", None)
    return inner if isinstance(value, torch.Tensor) and inner is not None else value


def install(the_device: torch.device, check_index) -> None:
    """Make storage constructors and `torch.load` know the device (once per process)."""
    name = the_device.type

    def new_storage(cls, *args, device: object = None, **kwargs):
        if device is None or str(device).split(":")[0] != name:
            return _CPU_STORAGE_NEW(cls, *args, device=device, **kwargs)
        check_index(torch.device(device))
        return device_storage(_CPU_STORAGE_NEW(cls, *args, **kwargs), the_device)

    def restore(storage: torch.UntypedStorage, location: str):
        if location.split(":")[0] != name:
            return None
        check_index(torch.device(location))
        return device_storage(host_storage(storage), the_device)

    torch.UntypedStorage.__new__ = staticmethod(new_storage)
    # torch's own privateuse1 entry (priority 23) would ask the allocator the device lacks
    torch.serialization.register_package(15, lambda storage: None, restore)
