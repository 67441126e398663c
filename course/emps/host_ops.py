"""Ops the emulated device runs whole, as the CPU runs them: recurrent layers and attention.

Most ops reach `EmulatedTensor.__torch_dispatch__` one aten kernel at a time. A few composite
ops are decomposed *above* it, by code in ATen that asks which device it runs on, and the
answer for a PrivateUse1 device is a path neither the CPU nor MPS takes:

- `nn.LSTM`, `nn.GRU`, `nn.LSTMCell`, `nn.GRUCell` (aten::lstm, gru, lstm_cell, gru_cell): ATen's
  RNN.cpp sends CUDA, XPU and PrivateUse1 inputs to the fused cells
  (`_thnn_fused_lstm_cell`, `_thnn_fused_gru_cell`), which have no CPU kernel, so every
  profile failed with "Could not run 'aten::_thnn_fused_lstm_cell' ... 'CPU' backend". MPS
  never took that path: it had its own LSTM kernel (`_lstm_mps`) and ran GRU and the cells
  through their unfused ops.
- `nn.RNN`, `nn.GRU`, `nn.LSTM` (aten::rnn_tanh, rnn_relu...): RNN.cpp projects the inputs of
  the whole sequence in one matrix product only for CPU tensors (`FullLayer`), one step at a
  time elsewhere; a sum taken in another order, so `nn.RNN` ran but its gradients were not
  the CPU's bits. (The CPU's LSTM is a oneDNN kernel besides.)
- `F.scaled_dot_product_attention`: ATen picks a fused kernel through a per-device stub that
  PrivateUse1 lacks, so the device got the unfused math path, up to 3e-7 away from the CPU's
  flash-attention kernel.

- `F.ctc_loss`: ATen takes a slower "composite compliant" path for tensor subclasses (which
  emps tensors are, to ATen), mixing the CPU lengths into device arithmetic; a real device
  takes the CPU's path.

So these ops get a kernel of their own at the AutogradPrivateUse1 key: it hands the device
tensors to the CPU (`_ToHost`: the same memory and strides, no copy), runs the op there, under
autograd, exactly as a CPU run would (the same kernel choice, LSTM's oneDNN kernel included),
and hands the results back (`_ToDevice`). Forward and backward are therefore bitwise the
CPU's on every profile; none of these ops ever hit a historical lost write, so none is
emulated, and their inner kernels do not show in `emps.record()` (as `_lstm_mps` was one
kernel on a Mac). With autograd off (`torch.inference_mode()`) the op reaches the device's
`__torch_dispatch__` undecomposed and runs on the CPU there (`run_on_host`).

Mixing in a CPU tensor is refused as elsewhere on the device; a packed sequence's
`batch_sizes` is a CPU tensor on every device, so it is let through (HOST_ARGUMENTS, which the
device's other ops let through too).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

HOST_OPS = (
    "lstm.input",
    "lstm.data",
    "gru.input",
    "gru.data",
    "rnn_tanh.input",
    "rnn_tanh.data",
    "rnn_relu.input",
    "rnn_relu.data",
    "lstm_cell",
    "gru_cell",
    "scaled_dot_product_attention",
    "ctc_loss.Tensor",
    "ctc_loss.IntList",
)
# Arguments that are CPU tensors by design, on every device: a packed sequence's lengths and
# batch sizes, CTC's lengths (torch asks for them on the CPU, as it reads them on the host)
HOST_ARGUMENTS = frozenset({"batch_sizes", "lengths", "input_lengths", "target_lengths"})


def overloads() -> list[torch._ops.OpOverload]:
    """The OpOverloads of HOST_OPS in this torch."""
    found = []
    for name in HOST_OPS:
        packet, _, overload = name.partition(".")
        found.append(getattr(getattr(torch.ops.aten, packet), overload or "default"))
    return found


def install(library: torch.library.Library, device_tensor: type, refuse_mix: Callable) -> None:
    """Register the whole-op kernels (once per process, with the device's library)."""
    to_host, to_device = _transfers(device_tensor)

    def host_kernel(overload: torch._ops.OpOverload) -> Callable:
        names = [argument.name for argument in overload._schema.arguments]
        label = overload._schema.name.split("::")[-1]

        def kernel(*args, **kwargs):
            for name, value in (*zip(names, args, strict=False), *kwargs.items()):
                _check_on_device(label, name, value, device_tensor, refuse_mix)
            host_args = [_map(value, device_tensor, to_host.apply) for value in args]
            host_kwargs = {k: _map(v, device_tensor, to_host.apply) for k, v in kwargs.items()}
            result = overload(*host_args, **host_kwargs)
            return _map(result, torch.Tensor, to_device.apply)

        return kernel

    for overload in overloads():
        library.impl(overload, host_kernel(overload), "AutogradPrivateUse1")


def _check_on_device(label, name, value, device_tensor, refuse_mix) -> None:
    items = value if isinstance(value, (list, tuple)) else (value,)
    for item in items:
        is_host = isinstance(item, torch.Tensor) and not isinstance(item, device_tensor)
        if is_host and item.dim() and name not in HOST_ARGUMENTS:
            raise refuse_mix(label, item.device)


def _map(value, kind: type, function: Callable):
    if isinstance(value, kind):
        return function(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(item, kind, function) for item in value)
    return value


def _transfers(device_tensor: type) -> tuple[type, type]:
    class _ToHost(torch.autograd.Function):
        """A device tensor as the CPU sees it: its memory, sizes and strides, no copy."""

        @staticmethod
        def forward(ctx, tensor):
            return tensor.inner.detach()

        @staticmethod
        def backward(ctx, grad):
            # a copy: the CPU's backward may return one tensor as the gradient of two inputs
            # (a cell's two biases), and the device's gradients are written in place later
            return device_tensor(grad.clone()) if grad is not None else None

    class _ToDevice(torch.autograd.Function):
        """A CPU result as a device tensor over the same memory."""

        @staticmethod
        def forward(ctx, tensor):
            return device_tensor(tensor.detach())

        @staticmethod
        def backward(ctx, grad):
            return grad.inner if isinstance(grad, device_tensor) else grad

    return _ToHost, _ToDevice
