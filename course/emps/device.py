"""The emulated device "emps": a real PyTorch backend, written in Python.

How it plugs in (notebook 05 shows it off):
- The PrivateUse1 dispatch key is renamed "emps" and set up as a Python backend
  (`torch.utils.backend_registration`), so `torch.device("emps:0")`, `model.to("emps")`,
  autograd's device guards and `torch.optim` all work unmodified.
- `empty.memory_format`, `empty_strided` and `_copy_from` get PrivateUse1 kernels through
  `torch.library`: they allocate a CPU tensor for the storage and wrap it in `EmulatedTensor`,
  or copy into or out of that storage.
- `EmulatedTensor` is a wrapper tensor subclass; its `__torch_dispatch__` sees every aten op on
  it. Views, factories and functional ops run the CPU kernel on the wrapped storage (so results
  are bitwise the CPU's). Mutating ops (`x.op_()` and `out=`) go to the emulated MPS kernels
  chosen by the active backend: that is where the Placeholder and its bugs live. Which op takes
  which path is decided once per op from its schema (`course.emps.ops`).

What ordinary code expects of a device, and how it gets it:
- Tied weights: `EmulatedTensor` is a traceable wrapper (`__tensor_flatten__`), so
  `module.to("emps")` swaps each parameter's contents in place (`torch.utils.swap_tensors`)
  and an embedding tied to an output layer stays one Parameter, as on mps. Two limits of
  swapping: the move fails (with PyTorch's "Couldn't swap") while a graph through the
  parameter is alive or a weakref to it exists, and `model.to("cpu")` makes one Parameter per
  module again (PyTorch's rule for a change of tensor type; re-tie after moving back).
- Memory: `data_ptr()`, `untyped_storage()`, `set_` and checkpoints (`torch.save`, and
  `torch.load` with `map_location="emps"`) work on device storages: `course.emps.storage`.
- CPU index tensors and boolean masks index device tensors, as on CUDA and MPS.
- `torch.emps.is_available()` is False: code that asks whether an accelerator is there
  (DataLoader's `pin_memory`, benchmark timers) keeps its CPU path after `import course`.
- The profile and the recorders belong to the process: see Note [One thread at a time] in
  `course.emps.threads`. Backward passes run on the thread that imported the course: see
  Note [Backward on the calling thread] there (without it, a script ending in a backward pass
  could abort at exit). An error raised on the device during a backward pass reaches the
  caller: Note [An error in a backward pass on the device] in `course.emps.backward_errors`.

Any model a learner brings (tests/emps/test_model_zoo.py trains one of each kind):
- Recurrent layers, attention and CTC loss run whole, as the CPU runs them, where ATen would
  otherwise pick a path by device that neither the CPU nor MPS takes (`course.emps.host_ops`).
- `out=` tensors of another shape are resized as the CPU resizes them, warning included,
  before the emulated kernel runs (`_resize_output`); in-place metadata ops (`t_`,
  `as_strided_`, `resize_`) change the wrapped memory and the wrapper follows.
- Random ops draw where the CPU puts its draws, on any layout: Note [Random draws land where
  the CPU puts them]. `torch.Generator(device="emps")` works (`course.emps.generators`).
- Sparse gradients (`nn.Embedding(sparse=True)`, `SparseAdam`) are sparse wrappers whose ops
  run as the CPU runs them (no historical lost write is known for sparse kernels).
- `pickle`, `copy.deepcopy`, `torch.save` round-trip device tensors and parameters.

The bits: on a fixed profile every result is bitwise the CPU's (the tests compare bit
patterns, also for scaled-dot-product attention, which runs the CPU's kernel choice); the
historical profiles differ only where their kernel families lose writes.

Not emulated, each refused with a CourseError that says what to do instead:
`torch.compile`/`torch.export` (FakeTensor tracing: `compile_refusal`), `torch.autocast`
(enabled), a second device index ("emps:1"), float64 (refused as MPS refuses it).
"""

from __future__ import annotations

import contextlib
import sys
import warnings

import torch

from course.emps import backend as backends
from course.emps import backward_errors, generators, host_ops, ops, storage
from course.emps.mps_kernels import KernelCall, passes_through, run_kernel
from course.emps.optim_paths import check_fused, run_foreach
from course.emps.threads import enter_calling_thread_backward
from course.errors import CourseError
from course.requirements import TORCH_FLOOR_TEXT

DEVICE_NAME = "emps"
DEVICE = f"{DEVICE_NAME}:0"
FLOAT64_MESSAGE = (
    "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
    "Please use float32 instead. (emulated MPS device 'emps': move to the CPU for float64)"
)
_CPU = torch.device("cpu")
_THE_DEVICE: list[torch.device] = []  # torch.device("emps:0"), once "emps" is registered


class EmulatedTensor(torch.Tensor):
    """A tensor on the emulated device: CPU storage in `.inner`, MPS-like kernels on top."""

    inner: torch.Tensor

    @staticmethod
    def __new__(cls, inner: torch.Tensor) -> EmulatedTensor:
        if type(inner) is not torch.Tensor or not inner.is_cpu:  # the hot path: CPU results
            _require_host_tensor(inner)
        if inner.dtype == torch.float64:
            raise TypeError(FLOAT64_MESSAGE)
        if inner.layout is not torch.strided:  # a sparse gradient (nn.Embedding(sparse=True))
            wrapper = torch.Tensor._make_wrapper_subclass(
                cls,
                inner.size(),
                dtype=inner.dtype,
                layout=inner.layout,
                device=_THE_DEVICE[0],
                requires_grad=False,
            )
        else:
            wrapper = torch.Tensor._make_wrapper_subclass(
                cls,
                inner.size(),
                strides=inner.stride(),
                storage_offset=inner.storage_offset(),
                dtype=inner.dtype,
                device=_THE_DEVICE[0],
                requires_grad=False,
            )
        wrapper.inner = inner
        return wrapper

    def __repr__(self, *, tensor_contents=None) -> str:
        text = repr(self.inner)
        extra = f", device='{DEVICE}'"
        if self.grad_fn is not None:
            extra += f", grad_fn=<{type(self.grad_fn).__name__}>"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        return text[:-1] + extra + ")" if text.endswith(")") else text

    def __format__(self, spec: str) -> str:
        """0-dim tensors format like their number (`f"{loss:.3f}"`), as on any device."""
        if self.dim() == 0:
            return self.item().__format__(spec)
        return super().__format__(spec)

    def __reduce_ex__(self, protocol):
        """Pickle as torch pickles any device tensor: its storage, offset, sizes and strides.

        The storage is saved once however many tensors view it (a view and its base stay one
        storage after `torch.load`), tagged "emps:0"; `torch.load` restores it on "emps" (or
        where `map_location` says) with functions its `weights_only=True` unpickler allows.
        The class itself is never pickled.
        """
        if isinstance(self, torch.nn.Parameter):
            return (torch._utils._rebuild_parameter, (self.detach(), self.requires_grad, {}))
        typed = torch.TypedStorage(
            wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True
        )
        metadata = (self.storage_offset(), tuple(self.size()), self.stride())
        return (torch._utils._rebuild_tensor_v2, (typed, *metadata, self.requires_grad, {}))

    def data_ptr(self) -> int:
        """The first element's address: distinct tensors differ, a view follows its base."""
        return self.inner.data_ptr()

    def untyped_storage(self) -> torch.UntypedStorage:
        """The device memory behind this tensor, shared by its views (`course.emps.storage`)."""
        return storage.device_storage(self.inner.untyped_storage(), self.device)

    def __tensor_flatten__(self):
        """A traceable wrapper: `module.to("emps")` then swaps each parameter in place (keeping
        tied weights one Parameter) instead of making a new Parameter per module."""
        return ["inner"], None

    @staticmethod
    def __tensor_unflatten__(inner_tensors, context, outer_size, outer_stride):
        return EmulatedTensor(inner_tensors["inner"])

    def tolist(self) -> object:
        """Copy to Python numbers (the device's memory is readable, as with MPS)."""
        return self.inner.tolist()

    def numpy(self, *, force: bool = False):
        """Refused as on a real device; `.cpu().numpy()` works."""
        if force:
            return self.detach().cpu().numpy(force=True)
        raise TypeError(
            f"can't convert {DEVICE} device type tensor to numpy. Use Tensor.cpu() to copy the "
            "tensor to host memory first."
        )

    @property
    def data(self) -> torch.Tensor:
        return self.detach()

    @data.setter
    def data(self, new: torch.Tensor) -> None:
        if not isinstance(new, EmulatedTensor):
            raise RuntimeError(
                f"cannot assign a {new.device} tensor to .data of an {DEVICE} tensor"
            )
        torch.Tensor.data.__set__(self, new)
        self.inner = new.inner

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        plan = _PLANS.get(id(func))  # by id: an OpOverload hashes in Python, slowly
        if plan is None or plan[0] is not func:
            plan = _plan(func)
        special, op = plan[1], plan[2]
        if special is not None:
            return special(func, args, kwargs)
        if op.route != "composite":
            _check_same_device(op.name, args, kwargs)
        return _HANDLERS[op.route](func, op, args, kwargs)


# id(overload) -> (overload, its special handler or None, its route): what the dispatch of an
# overload does depends on the overload only (course.emps.ops)
_PLANS: dict[int, tuple] = {}


def _plan(func: torch._ops.OpOverload) -> tuple:
    special = _SPECIAL.get(func)
    if special is None and _generator_slot(func) is not None:
        special = _run_with_generator
    if special is None and _host_argument_names(func):
        special = _run_with_host_arguments
    plan = _PLANS[id(func)] = (func, special, None if special else ops.route(func))
    return plan


def _generator_slot(func: torch._ops.OpOverload) -> tuple[int, str] | None:
    """Where a random op takes its generator: (position, name), or None for other ops."""
    for index, argument in enumerate(func._schema.arguments):
        if "Generator" in str(argument.type):
            return index, argument.name
    return None


def _host_argument_names(func: torch._ops.OpOverload) -> frozenset[str]:
    names = {argument.name for argument in func._schema.arguments}
    return frozenset(names & host_ops.HOST_ARGUMENTS)


def _run_with_host_arguments(func, args, kwargs):
    """An op with arguments that are CPU tensors on every device (a packed sequence's lengths
    and batch sizes, CTC's lengths): those are let through, the others checked as usual."""
    op = ops.route(func)
    host = _host_argument_names(func)
    names = [argument.name for argument in func._schema.arguments]
    checked = [value for name, value in zip(names, args, strict=False) if name not in host]
    _check_same_device(op.name, checked, {k: v for k, v in kwargs.items() if k not in host})
    result = _HANDLERS[op.route](func, op, args, kwargs)
    on_host = _HOST_RESULTS.get(op.name, ())
    if on_host:  # results the CPU keeps on every device (batch sizes, lengths)
        result = tuple(r.inner if i in on_host else r for i, r in enumerate(result))
    return result


# op -> positions of results that are CPU tensors on every device
_HOST_RESULTS = {"_pack_padded_sequence": (1,), "_pad_packed_sequence": (1,)}


def _run_with_generator(func, args, kwargs):
    """A random op: its generator must be the device's (course.emps.generators)."""
    index, name = _generator_slot(func)
    generator = kwargs.get(name) if name in kwargs else (args[index] if index < len(args) else None)
    generators.check_generator(func._schema.name.split("::")[-1], generator)
    op = ops.route(func)
    if op.route != "composite":
        _check_same_device(op.name, args, kwargs)
    return _HANDLERS[op.route](func, op, args, kwargs)


def _require_host_tensor(inner: object) -> None:
    """What an EmulatedTensor can wrap: a CPU tensor (it is the device's memory)."""
    if _traced(inner):
        raise compile_refusal(f"a {type(inner).__name__} stood in for the device's memory")
    plain = isinstance(inner, torch.Tensor) and not isinstance(inner, EmulatedTensor)
    if plain and inner.device.type == "cpu":
        return
    shown = f"a tensor on {inner.device}" if isinstance(inner, torch.Tensor) else repr(inner)[:60]
    raise CourseError(
        f"EmulatedTensor wraps a CPU torch.Tensor, not {shown} ({type(inner).__name__}); to "
        f"put values on the device use torch.tensor(values, device={DEVICE_NAME!r}) or "
        f"t.to({DEVICE_NAME!r})"
    )


def _traced(inner: object) -> bool:
    """Whether `inner` is a tracer's stand-in (torch.compile, torch.export and make_fx trace a
    device tensor by rebuilding it over a FakeTensor or a FunctionalTensor)."""
    if not isinstance(inner, torch.Tensor) or type(inner) is torch.Tensor:
        return False
    for module, name in _TRACING_TENSORS:
        kind = getattr(sys.modules.get(module), name, None)
        if kind is not None and isinstance(inner, kind):
            return True
    return False


_TRACING_TENSORS = (
    ("torch._subclasses.fake_tensor", "FakeTensor"),
    ("torch._subclasses.functional_tensor", "FunctionalTensor"),
)
COMPILE_MESSAGE = (
    "torch.compile (and torch.export, make_fx: anything that traces with FakeTensors) is not "
    f"supported on the emulated MPS device {DEVICE!r}: its tensors are a Python wrapper "
    "whose kernels run eagerly, and no compiler backend knows the device (real MPS has one "
    "in recent PyTorch). Call the function without torch.compile on emps tensors, or "
    "compile it for CPU tensors"
)
_REFUSALS: dict[str, type] = {}


def compile_refusal(detail: str) -> CourseError:
    """The CourseError a tracer gets on the device. While torch.compile runs it is also a
    TorchRuntimeError, one of the types Dynamo re-raises as they are, so the learner reads
    this message rather than an InternalTorchDynamoError wrapping it."""
    message = f"{COMPILE_MESSAGE} ({detail})"
    dynamo = sys.modules.get("torch._dynamo.exc")
    if dynamo is None:
        return CourseError(message)
    if "compile" not in _REFUSALS:

        class CompileNotSupported(CourseError, dynamo.TorchRuntimeError):
            def __init__(self, text: str) -> None:
                dynamo.TorchRuntimeError.__init__(self, text)

        CompileNotSupported.__module__ = __name__
        CompileNotSupported.__qualname__ = "CompileNotSupported"
        _REFUSALS["compile"] = CompileNotSupported
    return _REFUSALS["compile"](message)


def _run_functional(func, op: ops.OpRoute, args, kwargs):
    return _wrap(func(*_unwrap(args), **_unwrap_kwargs(kwargs)))


def _run_direct(func, op: ops.OpRoute, args, kwargs):
    """Run on the wrapped storage, so every write lands; an out= tensor the CPU kernel
    resized (with PyTorch's warning, where it warns) takes its new shape."""
    result = func(*_unwrap(args), **_unwrap_kwargs(kwargs))
    _follow_resizes([*args, *kwargs.values()])
    return _wrap(result)


def _run_fused(func, op: ops.OpRoute, args, kwargs):
    check_fused(backends.current_profile(), op.name, op.family)
    return _run_direct(func, op, args, kwargs)


def _run_metadata(func, op: ops.OpRoute, args, kwargs):
    """An in-place metadata op (`t_`, `as_strided_`, `resize_`...; ATen's own code calls
    `as_strided_`, e.g. adaptive_avg_pool2d on channels_last input): the CPU changes the
    sizes and strides of (an alias of) the wrapped memory, and the wrapper takes them."""
    tensor = args[0]
    if not isinstance(tensor, EmulatedTensor):
        raise _device_mix(op.name, tensor.device)
    inner = tensor.inner
    # an alias of its own first: the old `inner` object may be shared (it keeps its metadata)
    tensor.inner = inner.as_strided(inner.size(), inner.stride(), inner.storage_offset())
    func(tensor.inner, *_unwrap(args[1:]), **_unwrap_kwargs(kwargs))
    _follow_inner(tensor)
    return tensor


def _unwrap(value):
    """The CPU view of an argument: storage for device tensors, "cpu" for the device."""
    kind = type(value)
    if kind is EmulatedTensor:
        return value.inner
    if kind in _PLAIN:
        return value
    if kind is list or kind is tuple:
        return kind([_unwrap(item) for item in value])
    if isinstance(value, EmulatedTensor):
        return value.inner
    if isinstance(value, torch.device) and value.type == DEVICE_NAME:
        _check_index(value)
        return _CPU
    return value


def _unwrap_kwargs(kwargs: dict) -> dict:
    return {key: _unwrap(value) for key, value in kwargs.items()} if kwargs else kwargs


def _wrap(value):
    """Results of the CPU kernels, back on the device."""
    if type(value) is torch.Tensor:
        return EmulatedTensor(value)
    if isinstance(value, torch.Tensor):
        return value if isinstance(value, EmulatedTensor) else EmulatedTensor(value)
    if type(value) in (list, tuple):
        return type(value)(_wrap(item) for item in value)
    return value


def _check_index(device: torch.device) -> None:
    if device.index not in (None, 0):
        raise CourseError(
            f"device {str(device)!r} does not exist: the emulated MPS device has one device, "
            f"{DEVICE!r} (a Mac has one MPS device); use {DEVICE_NAME!r} or {DEVICE!r}"
        )


def _check_same_device(name: str, args, kwargs) -> None:
    """Refuse CPU tensors mixed in, as a real device would (0-dim CPU tensors act as scalars)."""
    for value in (*args, *kwargs.values()) if kwargs else args:
        kind = type(value)
        if kind is EmulatedTensor or kind in _PLAIN:
            continue
        if kind is list or kind is tuple:
            for item in value:
                _check_one(name, item)
        else:
            _check_one(name, value)


# Argument types with nothing to unwrap or check (the hot path tests the exact type first)
_PLAIN = frozenset({int, float, bool, str, type(None), torch.dtype, torch.memory_format})


def _check_one(name: str, value) -> None:
    if isinstance(value, torch.Tensor) and not isinstance(value, EmulatedTensor) and value.dim():
        raise _device_mix(name, value.device)


def _device_mix(name: str, other: torch.device) -> RuntimeError:
    return RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, "
        f"{DEVICE} and {other}! (in aten::{name})"
    )


def _copy_into(destination: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    """A copy across the device boundary, in either direction (copy_ and _copy_from)."""
    _host(destination).copy_(_host(source))
    return destination


def _host(tensor: torch.Tensor) -> torch.Tensor:
    """The CPU tensor holding a tensor's values: an EmulatedTensor's `inner`; for a plain
    tensor on "emps", which PyTorch's C++ makes over a device storage (pickle writes a
    storage through one), a CPU view of that storage's host; a CPU tensor itself."""
    if isinstance(tensor, EmulatedTensor):
        return tensor.inner
    if tensor.device.type != DEVICE_NAME:
        return tensor
    host = storage.host_storage(tensor.untyped_storage())
    view = torch.empty(0, dtype=tensor.dtype)
    return view.set_(host, tensor.storage_offset(), tensor.size(), tensor.stride())


def _copy_from_kernel(source, destination, non_blocking=False):
    return _copy_into(destination, source)


def _to_copy(func, args, kwargs):
    device = kwargs.get("device")
    to_host = device is not None and device.type == "cpu"
    if to_host and _whole_storage_copy(args[0], kwargs):
        return _LAZY_CLONE(args[0].inner)
    result = func(*_unwrap(args), **_unwrap_kwargs(kwargs))
    return result if to_host else _wrap(result)


# `x.cpu()` of a tensor that is its whole storage, unchanged in dtype and layout, can be a
# copy-on-write clone: the bytes are copied only if either side is written later, so code that
# reads a parameter on the host every step (the course's training history) does not copy it
# every step. Nobody can tell it from a copy. (Absent in a torch without _lazy_clone.) A dense
# tensor in another order (the story's transposed encoder weight) keeps its strides in a copy
# that preserves the format, `.cpu()`'s default, so it qualifies too.
_LAZY_CLONE = getattr(torch, "_lazy_clone", None)
_PLAIN_TO = {"device", "dtype", "layout", "memory_format", "non_blocking", "pin_memory"}


def _whole_storage_copy(source: object, kwargs: dict) -> bool:
    if _LAZY_CLONE is None or not isinstance(source, EmulatedTensor) or set(kwargs) - _PLAIN_TO:
        return False
    inner = source.inner
    return (
        kwargs.get("dtype") in (None, inner.dtype)
        and kwargs.get("layout") in (None, torch.strided)
        and not kwargs.get("pin_memory")
        and _same_layout_copy(inner, kwargs.get("memory_format"))
        and inner.storage_offset() == 0
        and inner.untyped_storage().nbytes() == inner.numel() * inner.element_size()
    )


def _same_layout_copy(inner: torch.Tensor, memory_format: torch.memory_format | None) -> bool:
    """Whether `_to_copy` with `memory_format` gives a copy with inner's own strides."""
    if memory_format in (None, torch.preserve_format):
        return inner.is_contiguous() or _dense(inner)
    return memory_format == torch.contiguous_format and inner.is_contiguous()


def _dense(tensor: torch.Tensor) -> bool:
    """Non-overlapping and dense: a contiguous layout with its dimensions permuted."""
    expected = 1
    for stride, size in sorted(zip(tensor.stride(), tensor.shape, strict=True)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _set(func, args, kwargs):
    return storage.set_storage(func, args, kwargs, _THE_DEVICE[0])


def _index_with_host_indices(func, args, kwargs):
    """CUDA and MPS take CPU index tensors and boolean masks (`x[idx]`, `x[mask] = 0`) and
    copy them over; here they are wrapped as they are (an index is only read)."""
    indices = [
        EmulatedTensor(i) if isinstance(i, torch.Tensor) and i.device.type == "cpu" else i
        for i in args[1]
    ]
    args = (args[0], indices, *args[2:])
    op = ops.route(func)
    _check_same_device(op.name, args, kwargs)
    return _HANDLERS[op.route](func, op, args, kwargs)


def _run_on_host(func, args, kwargs):
    """A whole op of `course.emps.host_ops` with autograd off: the CPU runs it, undecomposed."""
    label = func._schema.name.split("::")[-1]
    names = [argument.name for argument in func._schema.arguments]
    for name, value in (*zip(names, args, strict=False), *kwargs.items()):
        if name not in host_ops.HOST_ARGUMENTS:
            _check_same_device(label, (value,), {})
    return _wrap(func(*_unwrap(args), **_unwrap_kwargs(kwargs)))


_SPECIAL = {
    **dict.fromkeys(host_ops.overloads(), _run_on_host),
    torch.ops.aten.copy_.default: lambda func, args, kwargs: _copy_into(args[0], args[1]),
    torch.ops.aten._copy_from.default: lambda func, args, kwargs: _copy_into(args[1], args[0]),
    torch.ops.aten._to_copy.default: _to_copy,
    torch.ops.aten.set_.source_Storage: _set,
    torch.ops.aten.set_.source_Storage_storage_offset: _set,
    torch.ops.aten.set_.source_Tensor: _set,
    torch.ops.aten.index.Tensor: _index_with_host_indices,
    torch.ops.aten.index_put.default: _index_with_host_indices,
    torch.ops.aten.index_put_.default: _index_with_host_indices,
    torch.ops.aten._index_put_impl_.default: _index_with_host_indices,
}


def _tensor_slots(args, kwargs) -> list[tuple[int | str, int | None]]:
    """Where each device tensor sits: (position or keyword, index in a tensor list or None)."""
    slots: list[tuple[int | str, int | None]] = []
    for key, value in (*enumerate(args), *kwargs.items()):
        if isinstance(value, EmulatedTensor):
            slots.append((key, None))
        elif type(value) in (list, tuple):
            slots += [(key, j) for j, item in enumerate(value) if isinstance(item, EmulatedTensor)]
    return slots


def _get(args: list, kwargs: dict, slot):
    key, index = slot
    value = args[key] if isinstance(key, int) else kwargs[key]
    return value if index is None else value[index]


def _put(args: list, kwargs: dict, slot, new) -> None:
    key, index = slot
    container = args if isinstance(key, int) else kwargs
    if index is None:
        container[key] = new
    else:
        items = list(container[key])
        items[index] = new
        container[key] = items


def _run_mutating(func, op: ops.OpRoute, args, kwargs):
    """Build a KernelCall for a mutating op and run the active backend's kernel for its family.

    The output is the argument at the schema's written position, not the first argument that
    is the same object: `torch.add(c, b, out=c)` passes `c` as an input and as the output.
    """
    in_place = isinstance(op.written, int)
    target = args[op.written] if in_place else kwargs[op.written]
    if not isinstance(target, EmulatedTensor):  # a 0-dim CPU output with device inputs
        raise _device_mix(op.name, target.device)
    if not in_place:
        _resize_output(func, target, args, kwargs)
    layouts = _layouts(args, kwargs)
    if layouts == "sparse":  # no MPSGraph kernel, no Placeholder: see _layouts
        return _run_direct(func, op, args, kwargs)
    backend = backends.current_backend()
    kernel = backend.kernel_for(op.family)
    if passes_through(kernel) and layouts == "contiguous":
        func(*_unwrap(args), **_unwrap_kwargs(kwargs))  # what the kernel does on such tensors
        _follow_resizes([target])
        return target
    out_slot = (op.written, None)
    input_slots = [slot for slot in _tensor_slots(args, kwargs) if slot != out_slot]
    if in_place:
        input_slots.insert(0, out_slot)  # the graph reads self first
    base_args, base_kwargs = list(_unwrap(args)), _unwrap_kwargs(kwargs)

    def graph(out_buffer: torch.Tensor, input_buffers, scalar=None) -> object:
        call_args, call_kwargs = list(base_args), dict(base_kwargs)
        if scalar is not None:  # a kernel that mangles its number arguments (course.mystery)
            call_args = [scalar(a) if _is_number(a) else a for a in call_args]
            call_kwargs = {k: scalar(v) if _is_number(v) else v for k, v in call_kwargs.items()}
        if op.random:  # Note [Random draws land where the CPU puts them]
            for slot in input_slots:
                value = _get(call_args, call_kwargs, slot)
                if slot != out_slot and _same_memory(value, target.inner):
                    _put(call_args, call_kwargs, slot, _strided_copy(value))
            drawn = _strided_copy(target.inner, values=False)
            _put(call_args, call_kwargs, out_slot, drawn)
            func(*call_args, **call_kwargs)
            out_buffer.copy_(drawn)
            return out_buffer
        for slot, buffer in zip(input_slots, input_buffers, strict=True):
            _put(call_args, call_kwargs, slot, buffer)
        if in_place and input_buffers[0] is not out_buffer:
            out_buffer.copy_(input_buffers[0])  # the graph reads self, then writes the output
        _put(call_args, call_kwargs, out_slot, out_buffer)
        return func(*call_args, **call_kwargs)

    # Note [Random draws land where the CPU puts them]: a random kernel draws its numbers in
    # the order it walks its tensors, and the CPU walks non-contiguous ones in memory order
    # (and fills a contiguous float tensor of 16 or more elements in a pattern of its own;
    # an out= variant such as cauchy.out draws into a tensor laid out like its input), so
    # drawing between contiguous gathered copies would put the same numbers in other places.
    # So the graph of a random op reads its inputs where they lie (their values are those of
    # the gathered copies: only the layout differs; an input that is the output, as in
    # `torch.normal(c, s, out=c)`, is read from a copy with its layout, as a gathering kernel
    # reads a copy) and draws into a scratch tensor with the output's own sizes and strides,
    # then hands the values on as any graph's result: seeded draws are bitwise the CPU's
    # wherever they arrive, and a lost write is lost as before.

    call = KernelCall(
        op=op.label,
        family=op.family,
        output=target.inner,
        inputs=[_get(base_args, base_kwargs, slot) for slot in input_slots],
        graph=graph,
        strided_buffers=backend.profile.strided_buffers,
        arguments=tuple(a for a in (*base_args, *base_kwargs.values()) if _is_number(a)),
        in_place=in_place,
    )
    run_kernel(kernel, call)
    _follow_resizes([target])
    return target


def _same_memory(value: object, tensor: torch.Tensor) -> bool:
    return isinstance(value, torch.Tensor) and (
        value.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
    )


def _strided_copy(tensor: torch.Tensor, values: bool = True) -> torch.Tensor:
    """A tensor of its own with `tensor`'s sizes and strides (and values, unless told not)."""
    made = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype)
    return made.copy_(tensor) if values else made


def _layouts(args, kwargs) -> str:
    """The device tensors among the arguments: all "contiguous" (no Placeholder copies), some
    "strided" otherwise, or "sparse" when any is a sparse tensor (an embedding's sparse
    gradient, SparseAdam's updates). Sparse ops never ran through MPSGraph Placeholders (real
    MPS had no sparse kernels before 2.7), so no lost write is known for them: they run as
    the CPU runs them."""
    found = "contiguous"
    for value in (*args, *kwargs.values()):
        items = value if type(value) in (list, tuple) else (value,)
        for item in items:
            if isinstance(item, EmulatedTensor):
                if item.layout is not torch.strided:
                    return "sparse"
                if not item.inner.is_contiguous():
                    found = "strided"
    return found


def _is_number(value: object) -> bool:
    """A number argument (a scalar, alpha=, value=...), not a bool flag."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _resize_output(func, target: EmulatedTensor, args, kwargs) -> None:
    """Resize an out= tensor as the op will, before its kernel runs.

    A structured kernel's meta function resizes its out= tensor (`resize_output`: a tensor of
    another shape takes the result's shape, and PyTorch warns unless it was empty), restrides
    it to the layout it picked from the inputs, and only then runs the kernel body, on real
    MPS as on the CPU. So the emulated kernel must see the output already resized.

    The op's meta function on meta stand-ins says, silently, whether the shape changes (an
    op without one, or one it refuses, is left to the real run). Only then does the CPU run
    the op once into a fresh stand-in of the output's layout, so that the new sizes and
    strides, and the warning, are the CPU's own (Python meta functions word the warning
    differently and keep other strides); a random op's generator is rewound after it.
    """
    try:
        meta_args = [_meta(value) for value in args]
        meta_kwargs = {key: _meta(value) for key, value in kwargs.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func(*meta_args, **meta_kwargs)
    except Exception:  # no meta function, or one that refuses (a Python ref: a generator)
        return
    name = _out_name(kwargs, target)
    if meta_kwargs[name].shape == target.shape:
        return
    stand_in = torch.empty_strided(target.shape, target.stride(), dtype=target.dtype)
    with _generator_kept(func, args, kwargs):
        func(*_unwrap(args), **{**_unwrap_kwargs(kwargs), name: stand_in})
    inner = target.inner.resize_(stand_in.shape)
    if inner.stride() != stand_in.stride():
        inner.as_strided_(stand_in.shape, stand_in.stride())
    _follow_inner(target)


@contextlib.contextmanager
def _generator_kept(func, args, kwargs):
    """Rewind the generator a random op draws from (its own, or the CPU's default)."""
    slot = _generator_slot(func)
    if slot is None:
        yield
        return
    index, name = slot
    generator = kwargs.get(name) if name in kwargs else (args[index] if index < len(args) else None)
    generator = generator if generator is not None else torch.default_generator
    state = generator.get_state()
    try:
        yield
    finally:
        generator.set_state(state)


def _out_name(kwargs: dict, target: EmulatedTensor) -> str:
    return next(key for key, value in kwargs.items() if value is target)


def _meta(value):
    if isinstance(value, torch.Tensor):
        if value.layout is not torch.strided:
            raise NotImplementedError  # no meta stand-in: the real run decides
        return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="meta")
    if type(value) in (list, tuple):
        return type(value)(_meta(item) for item in value)
    if isinstance(value, torch.device):
        return torch.device("meta")
    return value


def _follow_resizes(arguments) -> None:
    """Give each device tensor whose CPU memory an op resized (an out= tensor) the new shape."""
    for value in arguments:
        values = value if type(value) in (list, tuple) else (value,)
        for tensor in values:
            if isinstance(tensor, EmulatedTensor) and tensor.layout is torch.strided:
                inner = tensor.inner
                if inner.shape != tensor.shape or inner.stride() != tensor.stride():
                    _follow_inner(tensor)


def _follow_inner(tensor: EmulatedTensor) -> None:
    """Set the wrapper's sizes, strides, offset and storage to its `inner`'s (a resize)."""
    inner = tensor.inner
    shown = storage.device_storage(inner.untyped_storage(), tensor.device)
    torch.ops.aten.set_.source_Storage_storage_offset.redispatch(
        _CPU_KEYS, tensor, shown, inner.storage_offset(), inner.size(), inner.stride()
    )


_CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


_HANDLERS = {
    "functional": _run_functional,
    "kernel": _run_mutating,
    "direct": _run_direct,
    "fused": _run_fused,
    "foreach": lambda func, op, args, kwargs: run_foreach(func, args, kwargs),
    "metadata": _run_metadata,
    "composite": lambda func, op, args, kwargs: func.decompose(*args, **kwargs),
}


def _empty_memory_format(
    size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None
):
    _check_index(torch.device(device or DEVICE))
    inner = torch.empty(size, dtype=dtype, memory_format=memory_format or torch.contiguous_format)
    return EmulatedTensor(inner)


def _empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    _check_index(torch.device(device or DEVICE))
    return EmulatedTensor(torch.empty_strided(size, stride, dtype=dtype))


# Factories whose composite kernel allocates `empty({0})` and resizes it through an out= call
# (arange, range, eye, and the windows, which call arange), or that have no composite kernel
# (tril/triu_indices). A wrapper cannot change its shape after the fact, so these run on the
# CPU and the result is wrapped. (zeros/ones/full stay as on MPS: empty, then a fill kernel.)
CPU_FACTORIES = (
    "arange",
    "range",
    "eye",
    "tril_indices",
    "triu_indices",
    "bartlett_window",
    "blackman_window",
    "hamming_window",
    "hann_window",
    "kaiser_window",
)


def _cpu_factory(overload: torch._ops.OpOverload):
    def kernel(*args, **kwargs):
        return _wrap(overload(*args, **_unwrap_kwargs(kwargs)))

    return kernel


def _factory_overloads():
    """Every overload of CPU_FACTORIES (found in this torch; a missing one fails clearly)."""
    for name in CPU_FACTORIES:
        packet = getattr(torch.ops.aten, name, None)
        if packet is None:
            raise CourseError(f"torch {torch.__version__} has no aten::{name}; emps needs updating")
        for overload_name in packet.overloads():
            overload = getattr(packet, overload_name)
            if not any(a.alias_info for a in overload._schema.arguments):  # not the out= ones
                yield overload


_LIBRARY: list[torch.library.Library] = []


class _BackendModule:
    """`torch.emps`: what PyTorch asks of a device module, for one device."""

    def is_initialized(self) -> bool:
        return True

    def is_available(self) -> bool:
        """False: emps is no accelerator. Generic code asks `torch.accelerator.is_available()`
        whether to pin memory (DataLoader) or synchronise a device (benchmark timers); with
        the course imported it must take the CPU path it takes without it. Tensors, modules
        and optimizers on "emps" never ask."""
        return False

    def current_device(self) -> int:
        return 0

    def device(self, device: int | str | torch.device) -> contextlib.nullcontext:
        """`torch.emps.device(...)`: there is one device, so nothing to switch to."""
        index = device if isinstance(device, int) else torch.device(device).index
        _check_index(torch.device(DEVICE_NAME, index))
        return contextlib.nullcontext()

    def device_count(self) -> int:
        return 1

    def _is_in_bad_fork(self) -> bool:
        return False

    def manual_seed_all(self, seed: int) -> None:
        """Nothing to do: random ops run on the CPU storage with the CPU generator."""

    def manual_seed(self, seed: int) -> None:
        """Seed the device's default generator, which is the CPU's (random ops on the device
        run the CPU kernels): so this seeds the CPU's random stream too, unlike
        `torch.mps.manual_seed` on a Mac. Seeded code that wants the two apart uses
        `torch.Generator(device="emps")`."""
        torch.manual_seed(seed)

    def seed(self) -> None:
        torch.seed()

    def initial_seed(self) -> int:
        return torch.initial_seed()

    def get_rng_state(self, device: object = None) -> torch.Tensor:
        """The state of the generator the device's random ops draw from by default: the CPU's
        (`torch.utils.checkpoint` and `torch.random.fork_rng` save and restore it)."""
        return torch.get_rng_state()

    def set_rng_state(self, state: torch.Tensor, device: object = None) -> None:
        torch.set_rng_state(state)

    def synchronize(self, device: object = None) -> None:
        """Nothing to wait for: every emulated kernel has finished when its call returns."""

    def get_amp_supported_dtype(self) -> list[torch.dtype]:
        """Called by `torch.autocast("emps")`: refuse clearly (no autocast kernels here), but
        let a disabled block through, as `torch.utils.checkpoint` opens one for every device
        of a checkpointed function when it recomputes it."""
        caller = sys._getframe(1)
        if caller.f_code.co_name == "__init__" and caller.f_locals.get("enabled") is False:
            return [torch.float32, torch.float16, torch.bfloat16]
        raise CourseError(
            f"torch.autocast({DEVICE_NAME!r}) is not emulated: the emulated MPS device runs "
            "in the dtypes you give it (float32 for the course's experiments). Drop the "
            "autocast block, or cast the model with .half() / .bfloat16() yourself"
        )


def require_torch(version: str, setup: object) -> None:
    """Refuse a torch without Python backends on PrivateUse1, naming the floor once, clearly."""
    if setup is None:
        raise CourseError(
            f"the emulated MPS device needs torch >= {TORCH_FLOOR_TEXT}: torch {version} lacks "
            "torch.utils.backend_registration._setup_privateuseone_for_python_backend, which "
            f"it is built on. Upgrade torch (pip install 'torch>={TORCH_FLOOR_TEXT}'), or run the "
            "standalone `python -m course mps-check` on a real Mac."
        )


def register() -> None:
    """Set PrivateUse1 up as the "emps" device, once per process."""
    if _LIBRARY:
        return
    registration = torch.utils.backend_registration
    setup = getattr(registration, "_setup_privateuseone_for_python_backend", None)
    require_torch(torch.__version__, setup)
    current = torch._C._get_privateuse1_backend_name()
    if current not in ("privateuseone", DEVICE_NAME):
        raise CourseError(f"PrivateUse1 is already used by the {current!r} backend in this process")
    if current != DEVICE_NAME:
        setup(
            DEVICE_NAME,
            backend_module=_BackendModule(),
            device_guard=backward_errors.DeviceGuard(),
        )
    library = torch.library.Library("aten", "IMPL")
    library.impl("empty.memory_format", _empty_memory_format, "PrivateUse1")
    library.impl("empty_strided", _empty_strided, "PrivateUse1")
    library.impl("_copy_from", _copy_from_kernel, "PrivateUse1")
    for overload in _factory_overloads():
        library.impl(overload, _cpu_factory(overload), "PrivateUse1")
    host_ops.install(library, EmulatedTensor, _device_mix)
    _LIBRARY.append(library)
    _THE_DEVICE.append(torch.device(DEVICE))
    storage.install(_THE_DEVICE[0], _check_index)
    generators.install(_THE_DEVICE[0], _check_index)
    enter_calling_thread_backward()
    backward_errors.install()
