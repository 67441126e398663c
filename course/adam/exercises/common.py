"""What notebook 03's checkers share: seeing how the learner's code ran, not only what it said.

Two watches. `course.exercises.ready_made` names a ready-made answer running inside the
learner's function (the course's own Adam step or op-isolation experiment, torch's Adam):
wrapped in a function of the learner's, it passes every comparison and teaches nothing, so the
checker must recognise it however it was wrapped. `OpWatch` logs every call of one of Adam's
four in-place ops, with the device, the active profile and the layouts of its output and inputs,
so a checker can tell an experiment that measured from one that answered from memory, ran on the
CPU, or never varied the layout it claims to test.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from course import emps
from course.adam.op_isolation import OPS
from course.layout.named import has_layout

# The layouts an isolation case can ask for (2-D, and each one a possible output).
CASE_LAYOUTS = ("contiguous", "transposed", "step-sliced", "storage-offset")
EMULATED = torch.device(emps.DEVICE).type  # "emps": an OpCall's device


@dataclass(frozen=True)
class OpCall:
    """One call of one of Adam's in-place ops, as an experiment made it."""

    op: str  # "addcmul_", ...
    device: str  # "emps" or "cpu"
    profile: str  # the profile active during the call (emulated device only)
    output: frozenset[str]  # the output's layouts (CASE_LAYOUTS it has)
    inputs: tuple[frozenset[str], ...]  # each same-shaped tensor input's layouts
    from_zeros: bool  # the output held only zeros before the call

    def laid_out_as(self, output_layout: str, input_layout: str) -> bool:
        """Whether this call's output and inputs have the layouts a case asks for."""
        return output_layout in self.output and all(input_layout in i for i in self.inputs)


def layouts(t: torch.Tensor) -> frozenset[str]:
    """The case layouts a tensor has (a transposed view inside its storage has two)."""
    return frozenset(name for name in CASE_LAYOUTS if has_layout(t, name))


class OpWatch(TorchDispatchMode):
    """Records an OpCall for each of Adam's four in-place ops run while active."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[OpCall] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name.removeprefix("aten::")
        if name in OPS and args and isinstance(args[0], torch.Tensor):
            self.calls.append(_op_call(name, args))
        return func(*args, **(kwargs or {}))

    def runs(self, op: str, device: str | None = None) -> list[OpCall]:
        """The calls of `op` (on `device`, when given)."""
        return [c for c in self.calls if c.op == op and device in (None, c.device)]


def _op_call(name: str, args: tuple) -> OpCall:
    out = args[0]
    inputs = [
        t for t in args[1:] if isinstance(t, torch.Tensor) and t.shape == out.shape and t.dim()
    ]
    device = out.device.type
    return OpCall(
        op=name,
        device=device,
        profile=emps.current_profile().name if device == EMULATED else "",
        output=layouts(out),
        inputs=tuple(layouts(t) for t in inputs),
        from_zeros=not bool(out.any()),
    )
