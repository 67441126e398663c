"""The emulated MPS kernels: one pattern that works, one that loses writes, and the redesign.

Every mutating op on the emulated device (in-place `x.op_()` or `op(..., out=x)`) becomes a
`KernelCall` and is handed to a kernel. The kernels differ only in how they treat the output:

- `gather_compute_scatter` is the pattern of the working MPS kernels (`binaryOpTensor` in
  BinaryOps.mm, used by `mul_`, `add_`...): a non-contiguous output gets a contiguous temporary,
  the graph writes there, and the kernel copies the result back.
- `write_through_placeholder` is the pattern of `addc_mul_div_out_mps` in torch 2.2.1 and of the
  random ops before pytorch#165267: the output goes straight to a Placeholder, whose silent copy
  receives the result, which is then dropped.
- `output_placeholder` is the redesign from notebook 06: see Note [The leaky Placeholder].
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from course.emps.copies import copy_back, gather
from course.emps.placeholder import OutputPlaceholder, Placeholder
from course.emps.record import KernelEvent, emit, recording


@dataclass
class KernelCall:
    """One mutating op call as a kernel sees it: the output to write and the inputs to read."""

    op: str
    family: str
    output: torch.Tensor
    inputs: list[torch.Tensor]
    # graph(output buffer, input buffers[, scalar=fn]) runs the op and returns what it wrote;
    # `scalar` maps each number argument on its way in (a planted bug's mangled constant)
    graph: Callable[..., object]
    strided_buffers: bool = False
    arguments: tuple[object, ...] = ()  # the op's number arguments (scalars, alpha=, value=...)
    in_place: bool = False  # x.op_(...): the first input is the output, read before it is written
    temporaries: int = 0
    last_buffer: torch.Tensor | None = field(default=None, repr=False)
    _gathers: list[tuple[torch.Tensor, torch.Tensor, tuple[int, int]]] = field(
        default_factory=list, repr=False
    )

    def placeholder(self, tensor: torch.Tensor) -> Placeholder:
        """Wrap a tensor for the graph (gathering a contiguous copy if it is not contiguous)."""
        earlier = self._unchanged_gather(tensor)
        if earlier is not None:
            return self._count(_Regathered(tensor, earlier))
        return self._remember(self._count(Placeholder(tensor, self.strided_buffers)))

    def remember_gather(self, tensor: torch.Tensor, buffer: torch.Tensor) -> None:
        """A contiguous copy of `tensor` a kernel made itself (gather_compute_scatter's output
        temporary): a later placeholder of the unchanged tensor in this call starts from it."""
        versions = _versions(tensor, buffer)
        if versions is not None:
            self._gathers.append((tensor, buffer, versions))

    def output_placeholder(self, tensor: torch.Tensor) -> OutputPlaceholder:
        """Wrap an output for the graph; it copies the result back when its `with` block ends."""
        return self._remember(self._count(OutputPlaceholder(tensor, self.strided_buffers)))

    def run_graph(self, output: Placeholder, inputs: Sequence[Placeholder]) -> None:
        """Run the op's MPSGraph: read the input buffers, write the output buffer.

        `last_buffer` keeps the tensor the op says it wrote (aten returns its output), so the
        recorder judges where the result really went, not where it was meant to go.

        Strided buffers (macOS 15, where MPSGraph reads and writes strided arrays itself) are
        computed from and into contiguous scratch copies, the result copied in: the graph is
        right on any layout, and the host's CPU kernels are not all right on strided outputs
        (`gelu.out` on oneDNN builds), nor bitwise alike on strided and contiguous inputs.
        Only the emulator pays for the scratch copies; they are no temporaries of the emulated
        kernel. (Before macOS 15 the Placeholders have gathered every buffer already.)

        An in-place op's graph reads its output first (`x.mul_(2)` reads x): when that input's
        placeholder holds a copy of the very values the output buffer holds, the graph reads the
        output buffer instead, a copy the emulator saves (the temporary is still counted).
        """
        buffer = output.buffer
        scratch = gather(buffer)
        buffers = [gather(p.buffer) for p in inputs[1:]]
        if inputs:
            first = inputs[0]
            same = self.in_place and _holds_output_values(first, output)
            buffers.insert(0, scratch if same else gather(first.buffer))
        written = self.graph(scratch, buffers)
        if scratch is not buffer and written is scratch:
            buffer.copy_(scratch)
            written = buffer
        self.last_buffer = written if isinstance(written, torch.Tensor) else buffer

    def _count(self, placeholder):
        self.temporaries += int(placeholder.gathered)
        return placeholder

    def _remember(self, placeholder):
        versions = _versions(placeholder.tensor, placeholder.buffer)
        if placeholder.gathered and versions is not None:
            self._gathers.append((placeholder.tensor, placeholder.buffer, versions))
        return placeholder

    def _unchanged_gather(self, tensor: torch.Tensor) -> torch.Tensor | None:
        """A contiguous copy of `tensor` made earlier in this call, if neither changed since."""
        for source, buffer, versions in self._gathers:
            if source is tensor and _versions(source, buffer) == versions:
                return buffer
        return None


class _Regathered(Placeholder):
    """A second gather of an unchanged tensor: a clone of the first (same values, own buffer).

    Only the emulator's own cost changes (a contiguous clone instead of another strided copy,
    made when the buffer is first read: run_graph reads every input before the graph writes);
    the kernel still counts it as the temporary the real Placeholder makes.
    """

    def __init__(self, tensor: torch.Tensor, earlier: torch.Tensor) -> None:
        self.tensor = tensor
        self.gathered = True
        self.earlier = earlier
        self._buffer: torch.Tensor | None = None

    @property
    def buffer(self) -> torch.Tensor:
        if self._buffer is None:
            self._buffer = self.earlier.clone()
        return self._buffer


def _holds_output_values(placeholder: object, output: Placeholder) -> bool:
    """Whether an input placeholder's buffer would hold what the output's buffer holds now."""
    if isinstance(placeholder, _Regathered):
        return placeholder.earlier is output.buffer
    return getattr(placeholder, "buffer", None) is output.buffer


def _versions(source: torch.Tensor, buffer: torch.Tensor) -> tuple[int, int] | None:
    """In-place modification counters (None for inference tensors, which have none)."""
    try:
        return source._version, buffer._version
    except RuntimeError:
        return None


Kernel = Callable[[KernelCall], None]
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality (NaN equals NaN, -0.0 differs from 0.0): what "the write arrived" means."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    as_int = _BITS.get(a.element_size())
    if as_int is None or a.dtype == torch.bool:
        return torch.equal(a, b)
    return torch.equal(a.view(as_int), b.view(as_int))


def gather_compute_scatter(call: KernelCall) -> None:
    """The working pattern: compute into a contiguous temporary, then copy back into the output."""
    needs_copy = not call.output.is_contiguous() and not call.strided_buffers
    result = gather(call.output) if needs_copy else call.output
    call.temporaries += int(needs_copy)
    if needs_copy:
        call.remember_gather(call.output, result)
    output = call.placeholder(result)
    inputs = [call.placeholder(t) for t in call.inputs]
    call.run_graph(output, inputs)
    if needs_copy:
        copy_back(call.output, result)


def write_through_placeholder(call: KernelCall) -> None:
    """2.2.1's addcmul_/addcdiv_ kernel: the output, like each input, reaches the graph through a
    Placeholder (notebook 06 prints this source before asking what the output holds, so this
    docstring says what the kernel does, not what comes of it)."""
    output = call.placeholder(call.output)
    inputs = [call.placeholder(t) for t in call.inputs]
    call.run_graph(output, inputs)


def output_placeholder(call: KernelCall) -> None:
    """The redesign: an output placeholder writes back on exit, so no kernel can forget."""
    with call.output_placeholder(call.output) as output:
        inputs = [call.placeholder(t) for t in call.inputs]
        call.run_graph(output, inputs)


def passes_through(kernel: Kernel) -> bool:
    """Whether the device may skip building a KernelCall: `kernel` is one of the three above,
    which all run the graph straight on contiguous tensors (no gather, no copy, nothing lost),
    and no recorder is listening. The caller checks that every tensor is contiguous."""
    return kernel in _PLAIN_ON_CONTIGUOUS and not recording()


def run_kernel(kernel: Kernel, call: KernelCall) -> None:
    """Run a kernel on a call, and record what happened if anyone is listening."""
    if not recording():
        kernel(call)
        return
    start = time.perf_counter()
    kernel(call)
    seconds = time.perf_counter() - start
    buffer = call.last_buffer
    wrote_elsewhere = buffer is not None and buffer.data_ptr() != call.output.data_ptr()
    lost = wrote_elsewhere and not same_bits(buffer, call.output)
    emit(
        KernelEvent(
            op=call.op,
            family=call.family,
            kernel=getattr(kernel, "__name__", repr(kernel)),
            shape=tuple(call.output.shape),
            stride=tuple(call.output.stride()),
            contiguous=call.output.is_contiguous(),
            temporaries=call.temporaries,
            lost_write=bool(lost),
            seconds=seconds,
        )
    )


_PLAIN_ON_CONTIGUOUS = (gather_compute_scatter, write_through_placeholder, output_placeholder)
