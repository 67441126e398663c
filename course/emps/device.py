"""The emulated device "emps": a real PyTorch backend, written in Python.

How it plugs in (notebook 05 shows it off):
- The PrivateUse1 dispatch key is renamed "emps" and set up as a Python backend
  (`torch.utils.backend_registration`), so `torch.device("emps:0")`, `model.to("emps")`,
  autograd's device guards and `torch.optim` all work unmodified.
- `empty.memory_format` and `empty_strided` get PrivateUse1 kernels through `torch.library`:
  they allocate a CPU tensor for the storage and wrap it in `EmulatedTensor`.
- `EmulatedTensor` is a wrapper tensor subclass; its `__torch_dispatch__` sees every aten op on
  it. Views, factories and functional ops run the CPU kernel on the wrapped storage (so results
  are bitwise the CPU's). Mutating ops (`x.op_()` and `out=`) go to the emulated MPS kernels
  chosen by the active backend: that is where the Placeholder and its bugs live.
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from course.emps import backend as backends
from course.emps.kernels import KernelCall, run_kernel
from course.errors import CourseError

DEVICE_NAME = "emps"
DEVICE = f"{DEVICE_NAME}:0"
FLOAT64_MESSAGE = (
    "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
    "Please use float32 instead. (emulated MPS device 'emps': move to the CPU for float64)"
)
# In-place ops that change metadata, not data: a wrapper cannot follow them, so refuse clearly.
_METADATA_INPLACE = {
    "t_",
    "transpose_",
    "squeeze_",
    "unsqueeze_",
    "as_strided_",
    "resize_",
    "resize_as_",
    "set_",
    "swapdims_",
    "swapaxes_",
    "detach_",
}


class EmulatedTensor(torch.Tensor):
    """A tensor on the emulated device: CPU storage in `.inner`, MPS-like kernels on top."""

    inner: torch.Tensor

    @staticmethod
    def __new__(cls, inner: torch.Tensor) -> EmulatedTensor:
        if inner.dtype == torch.float64:
            raise TypeError(FLOAT64_MESSAGE)
        wrapper = torch.Tensor._make_wrapper_subclass(
            cls,
            inner.size(),
            strides=inner.stride(),
            storage_offset=inner.storage_offset(),
            dtype=inner.dtype,
            device=torch.device(DEVICE),
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
        name = func._schema.name.split("::")[-1]
        if func is torch.ops.aten._to_copy.default and _is_cpu(kwargs.get("device")):
            return func(*_unwrap(args), **_unwrap(kwargs))
        if func is torch.ops.aten.copy_.default:
            args[0].inner.copy_(_unwrap(args[1]), *args[2:], **kwargs)
            return args[0]
        _check_same_device(name, args, kwargs)
        written = _written_argument(func)
        if written is not None and name in _METADATA_INPLACE:
            raise CourseError(
                f"in-place metadata op {name} is not supported on {DEVICE}; "
                "use its out-of-place form (e.g. x = x.t())"
            )
        if written is not None:
            return _run_mutating(func, name, args, kwargs, written)
        return tree_map(_wrap, func(*_unwrap(args), **_unwrap(kwargs)))


def _is_cpu(device) -> bool:
    return device is not None and torch.device(device).type == "cpu"


def _unwrap(tree):
    def one(x):
        if isinstance(x, EmulatedTensor):
            return x.inner
        if isinstance(x, torch.device) and x.type == DEVICE_NAME:
            return torch.device("cpu")
        return x

    return tree_map(one, tree)


def _wrap(x):
    return (
        EmulatedTensor(x)
        if isinstance(x, torch.Tensor) and not isinstance(x, EmulatedTensor)
        else x
    )


def _check_same_device(name: str, args, kwargs) -> None:
    """Refuse CPU tensors mixed in, as a real device would (0-dim CPU tensors act as scalars)."""
    for leaf in tree_flatten((args, kwargs))[0]:
        if (
            isinstance(leaf, torch.Tensor)
            and not isinstance(leaf, EmulatedTensor)
            and leaf.dim() > 0
        ):
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two devices, "
                f"{DEVICE} and {leaf.device}! (in aten::{name})"
            )


def _written_argument(func) -> str | int | None:
    """The one argument an op writes into: a position (in-place) or a kwarg name (out=)."""
    written = [
        (i, a)
        for i, a in enumerate(func._schema.arguments)
        if a.alias_info is not None and a.alias_info.is_write
    ]
    if len(written) != 1:
        return None if not written else _multi_output(func)
    index, argument = written[0]
    return argument.name if argument.kwarg_only else index


def _multi_output(func):
    raise CourseError(
        f"{func._schema.name} writes several outputs; the emulated device does not "
        "model multi-output out= ops"
    )


def _run_mutating(func, name: str, args, kwargs, written):
    """Build a KernelCall for a mutating op and run the active backend's kernel for its family."""
    leaves, spec = tree_flatten((args, kwargs))
    target = args[written] if isinstance(written, int) else kwargs[written]
    out_index = next(i for i, leaf in enumerate(leaves) if leaf is target)
    tensor_indices = [i for i, leaf in enumerate(leaves) if isinstance(leaf, EmulatedTensor)]
    in_place = isinstance(written, int)
    input_indices = [i for i in tensor_indices if in_place or i != out_index]
    inner = [leaf.inner if isinstance(leaf, EmulatedTensor) else _unwrap(leaf) for leaf in leaves]

    def graph(out_buffer: torch.Tensor, input_buffers) -> None:
        substituted = list(inner)
        for index, buffer in zip(input_indices, input_buffers, strict=True):
            substituted[index] = buffer
        if in_place and input_buffers[0] is not out_buffer:
            out_buffer.copy_(input_buffers[0])  # the graph reads self, then writes the output
        substituted[out_index] = out_buffer
        call_args, call_kwargs = tree_unflatten(substituted, spec)
        func(*call_args, **call_kwargs)

    family = func._schema.name.split("::")[-1].rstrip("_")
    backend = backends.current_backend()
    call = KernelCall(
        op=f"aten::{name}" + ("" if in_place else f".{func._overloadname}"),
        family=family,
        output=target.inner,
        inputs=[inner[i] for i in input_indices],
        graph=graph,
        strided_buffers=backend.profile.strided_buffers,
    )
    run_kernel(backend.kernel_for(family), call)
    return target


def _empty_memory_format(
    size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None
):
    inner = torch.empty(size, dtype=dtype, memory_format=memory_format or torch.contiguous_format)
    return EmulatedTensor(inner)


def _empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    return EmulatedTensor(torch.empty_strided(size, stride, dtype=dtype))


_LIBRARY: list[torch.library.Library] = []


def register() -> None:
    """Set PrivateUse1 up as the "emps" device, once per process."""
    if _LIBRARY:
        return
    registration = torch.utils.backend_registration
    setup = getattr(registration, "_setup_privateuseone_for_python_backend", None)
    if setup is None:
        raise CourseError(
            f"the emulated MPS device needs torch >= 2.9 (Python backends via PrivateUse1); "
            f"this is torch {torch.__version__}. Upgrade torch, or run the standalone "
            "`python -m course mps-check` on a real Mac."
        )
    current = torch._C._get_privateuse1_backend_name()
    if current not in ("privateuseone", DEVICE_NAME):
        raise CourseError(f"PrivateUse1 is already used by the {current!r} backend in this process")
    if current != DEVICE_NAME:
        setup(DEVICE_NAME)
    library = torch.library.Library("aten", "IMPL")
    library.impl("empty.memory_format", _empty_memory_format, "PrivateUse1")
    library.impl("empty_strided", _empty_strided, "PrivateUse1")
    _LIBRARY.append(library)


def is_emulated(tensor: torch.Tensor) -> bool:
    """Whether a tensor lives on the emulated device."""
    return isinstance(tensor, EmulatedTensor)
