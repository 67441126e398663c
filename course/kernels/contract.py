"""The device's contract, enforced on a learner's kernel: MPSGraph before macOS 15 took only
contiguous buffers, and `run_graph` takes Placeholders.

On the emulated device a "graph" is a CPU op, which would happily read and write any strides;
so a kernel that skips the Placeholder (`call.graph(call.output, call.inputs)`) would compute the
right answer here while the real MPSGraph of 2024 could not have run it. The notebook 06 checkers
therefore hand the learner's kernel a `LearnerCall`: the same API as `course.emps.KernelCall`,
whose graph refuses a non-contiguous buffer on profiles without strided buffers (as MPSGraph
did), whose `run_graph` explains a raw tensor instead of failing with an AttributeError, and
which notes what the kernel did (a non-contiguous temporary, the graph never run, `call.output`
rebound or its memory swapped) so feedback can say why a write was lost.
The device itself is unchanged (course.emps is not ours to alter).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from course import emps
from course.errors import CourseError


class ContractViolation(CourseError):
    """The kernel asked the graph for something MPSGraph before macOS 15 could not do."""


@dataclass
class KernelNotes:
    """What a learner's kernel did during one call, for the checker's feedback."""

    violation: str = ""  # the contract broken, if any
    shown: tuple[str, str] = ("a strided buffer", "contiguous ones")  # (what it gave, what's due)
    strided_temporaries: list[tuple[int, ...]] = field(default_factory=list)  # their strides
    graph_runs: int = 0
    placeholder_on_output: bool = False  # the graph wrote a gathered copy of call.output
    swapped: bool = False  # call.output's memory swapped (`call.output.data = ...`)
    rebound: list[str] = field(default_factory=list)  # `call.output = ...` and the like
    output_storage: int = 0  # the output's data_ptr when the kernel started
    graph_result: torch.Tensor | None = None  # the output buffer, as the last graph left it

    def clear(self) -> None:
        """Forget everything noted: one KernelNotes per call."""
        fresh = KernelNotes()
        for name in vars(fresh):
            setattr(self, name, getattr(fresh, name))


def _describe(tensor: torch.Tensor) -> str:
    return f"shape {tuple(tensor.shape)}, stride {tensor.stride()}"


class LearnerCall:
    """A `KernelCall` as the learner's kernel sees it: same attributes, the contract enforced."""

    def __init__(self, call: emps.KernelCall, notes: KernelNotes) -> None:
        object.__setattr__(self, "_call", call)
        object.__setattr__(self, "_notes", notes)
        object.__setattr__(self, "_graph", call.graph)
        call.graph = self._checked_graph  # every route to the graph goes through the check
        notes.output_storage = call.output.data_ptr()

    def __getattr__(self, name: str):  # op, family, output, inputs, strided_buffers, ...
        return getattr(self._call, name)

    def __setattr__(self, name: str, value: object) -> None:
        """`call.output = temporary` rebinds a name in the kernel, never the caller's tensor."""
        self._notes.rebound.append(name)
        object.__setattr__(self, name, value)

    def placeholder(self, tensor: torch.Tensor):
        """Wrap a tensor for the graph (see KernelCall.placeholder), noting odd temporaries."""
        self._note_temporary(_require_tensor("call.placeholder", tensor))
        return self._call.placeholder(tensor)

    def output_placeholder(self, tensor: torch.Tensor):
        """Wrap an output for the graph (see KernelCall.output_placeholder)."""
        self._note_temporary(_require_tensor("call.output_placeholder", tensor))
        return self._call.output_placeholder(tensor)

    def run_graph(self, output, inputs: Sequence) -> None:
        """Run the op's graph on placeholders (see KernelCall.run_graph), with clear refusals.

        The buffers are checked here, before the emulator's own scratch copies (which would
        make any buffer contiguous) hide what the kernel handed over."""
        _require_placeholder("the output", output)
        if not isinstance(inputs, (list, tuple)):
            raise CourseError(
                "run_graph(output, inputs) takes a list of placeholders as inputs, e.g. "
                f"[call.placeholder(t) for t in call.inputs]; got {type(inputs).__name__}"
            )
        for number, item in enumerate(inputs):
            _require_placeholder(f"input {number}", item)
        self._require_contiguous(output.buffer, [p.buffer for p in inputs])
        self._require_dtype(output.buffer)
        if getattr(output, "tensor", None) is self._call.output and output.buffer is not (
            self._call.output
        ):
            self._notes.placeholder_on_output = True
        self._call.run_graph(output, inputs)
        self._notes.graph_result = output.buffer.clone()

    def _checked_graph(self, out_buffer: torch.Tensor, in_buffers: Sequence[torch.Tensor]):
        self._require_contiguous(out_buffer, in_buffers)
        self._notes.graph_runs += 1
        return self._graph(out_buffer, in_buffers)

    def _require_contiguous(self, out_buffer, in_buffers: Sequence) -> None:
        if self._call.strided_buffers:
            return
        named = [("output", out_buffer)] + [(f"input {i}", b) for i, b in enumerate(in_buffers)]
        for role, buffer in named:
            if isinstance(buffer, torch.Tensor) and not buffer.is_contiguous():
                self._notes.violation = (
                    f"your kernel handed the graph a non-contiguous {role} buffer "
                    f"({_describe(buffer)}). MPSGraph before macOS 15 reads and writes "
                    "contiguous buffers only: on a real Mac this graph could not run. "
                    "Every buffer must reach the graph through a placeholder (or be a "
                    "contiguous temporary)"
                )
                raise ContractViolation(self._notes.violation)

    def _require_dtype(self, out_buffer: torch.Tensor) -> None:
        """The graph writes the output's dtype: MPSGraph is built for its tensors' dtypes, and
        MPS computes in float16 and bfloat16 too, so a temporary must take the output's."""
        want = self._call.output.dtype
        if isinstance(out_buffer, torch.Tensor) and out_buffer.dtype != want:
            self._notes.shown = (f"a {out_buffer.dtype} buffer", f"a {want} one")
            self._notes.violation = (
                f"your kernel handed the graph a {out_buffer.dtype} output buffer for a {want} "
                "output. An MPSGraph is built for its tensors' dtypes (MPS has float16 and "
                "bfloat16 tensors too): on a real Mac this graph could not run. A temporary "
                "must take the output's dtype (dtype=call.output.dtype, or "
                "call.output.contiguous())"
            )
            raise ContractViolation(self._notes.violation)

    def _note_temporary(self, tensor: torch.Tensor) -> None:
        """A non-contiguous tensor that is neither the output nor an input: a temporary made
        with clone() or empty_like(), which keep the layout (notebook 04)."""
        known = [self._call.output, *self._call.inputs]
        if any(tensor is t for t in known) or tensor.is_contiguous():
            return
        if not self._call.strided_buffers:
            self._notes.strided_temporaries.append(tensor.stride())


def _require_tensor(where: str, value: object) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise CourseError(f"{where}(...) wraps a tensor, not {type(value).__name__}")
    return value


def _require_placeholder(role: str, value: object) -> None:
    if isinstance(value, torch.Tensor):
        raise CourseError(
            f"run_graph got a raw tensor as {role}; it takes placeholders: wrap it first with "
            "call.placeholder(tensor), whose .buffer is what the graph reads or writes"
        )
    if not isinstance(getattr(value, "buffer", None), torch.Tensor):
        raise CourseError(
            f"run_graph got {type(value).__name__} as {role}; it takes placeholders (objects "
            "with a .buffer tensor), e.g. call.placeholder(tensor)"
        )


def under_contract(
    kernel: Callable[[emps.KernelCall], None], notes: KernelNotes
) -> Callable[[emps.KernelCall], None]:
    """The learner's kernel, run on a `LearnerCall`: what a private backend installs.

    The notes start afresh on each call, so after a run they describe the last call."""

    def contracted(call: emps.KernelCall) -> None:
        notes.clear()
        kernel(LearnerCall(call, notes))
        notes.swapped = call.output.data_ptr() != notes.output_storage

    contracted.__name__ = getattr(kernel, "__name__", "learner_kernel")
    return contracted
