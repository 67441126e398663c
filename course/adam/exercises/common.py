"""What notebook 03's checkers share: seeing how the learner's code ran, not only what it said.

`OpWatch` logs every call of one of Adam's four in-place ops (its device, the profile in force,
the layouts of its output and inputs, what of the CPU's answer arrived), so a checker can tell
an experiment that measured from one that answered from memory, ran on the CPU or never varied
the layout it claims to test. `Writes` logs which op wrote into which memory, so a step that
reaches torch's numbers with other ops (`sub_`, `copy_` of an out-of-place result) is told it is
not torch's step: on the CPU the bits agree, on the story's device each op is its own kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from course import emps
from course.adam.op_isolation import OPS
from course.emps.mps_kernels import same_bits
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
    changes: bool  # the op, run on the CPU on these values, changes the output
    arrived: str  # what of the CPU's answer the output holds after: all, part, off, none
    shape: tuple[int, ...]  # the output's shape

    def laid_out_as(self, output_layout: str, input_layout: str) -> bool:
        """Whether this call's output and inputs have the layouts a case asks for."""
        return output_layout in self.output and all(input_layout in i for i in self.inputs)


def layouts(t: torch.Tensor) -> frozenset[str]:
    """The case layouts a tensor has (a transposed view inside its storage has two). An
    experiment may use 3-D tensors: laid_out's "transposed" reverses all their dims, and any
    such dense, non-contiguous tensor is the case's non-contiguous output too."""
    named = {name for name in CASE_LAYOUTS if has_layout(t, name)}
    if t.dim() > 2 and has_layout(t, "permuted"):
        named.add("transposed")
    return frozenset(named)


class OpWatch(TorchDispatchMode):
    """Records an OpCall for each of Adam's four in-place ops run while active."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[OpCall] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func._schema.name.removeprefix("aten::")
        if not (name in OPS and args and isinstance(args[0], torch.Tensor)):
            return func(*args, **kwargs)
        out = args[0]
        start = out.detach().cpu().clone()
        expected = start.clone()
        func(expected, *(_on_cpu(a) for a in args[1:]), **kwargs)  # the CPU's answer
        result = func(*args, **kwargs)
        inputs = [t for t in args[1:] if isinstance(t, torch.Tensor) and t.shape == out.shape]
        device = out.device.type
        self.calls.append(
            OpCall(
                op=name,
                device=device,
                profile=emps.current_profile().name if device == EMULATED else "",
                output=layouts(out),
                inputs=tuple(layouts(t) for t in inputs if t.dim()),
                from_zeros=not bool(start.any()),
                changes=not same_bits(start, expected),
                arrived=_arrived(out.detach().cpu(), start, expected),
                shape=tuple(out.shape),
            )
        )
        return result

    def runs(self, op: str, device: str | None = None) -> list[OpCall]:
        """The calls of `op` (on `device`, when given)."""
        return [c for c in self.calls if c.op == op and device in (None, c.device)]


def _on_cpu(value: object) -> object:
    return value.detach().cpu() if isinstance(value, torch.Tensor) else value


def _arrived(after: torch.Tensor, start: torch.Tensor, expected: torch.Tensor) -> str:
    """How much of the op's result the output holds: all of it, none (still the start), part
    (some elements still hold their start where the op changes them), or off (every element
    written, not to the CPU's bits: a tolerant comparison calls that an update)."""
    if same_bits(after, expected):
        return "all"
    if same_bits(after, start):
        return "none"
    unwritten = (_bits(after) == _bits(start)) & (_bits(expected) != _bits(start))
    return "part" if bool(unwritten.any()) else "off"


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bits as integers (NaN equals NaN), for elementwise "same bits"."""
    as_int = {2: torch.int16, 4: torch.int32, 8: torch.int64}.get(t.element_size())
    return t.view(as_int) if t.is_floating_point() and as_int else t


def base_name(schema_name: str) -> str:
    """An aten op's name without namespace, foreach prefix or in-place suffix: 'addcdiv' for
    aten::addcdiv_, aten::addcdiv (out=) and aten::_foreach_addcdiv_ alike."""
    return schema_name.removeprefix("aten::").removeprefix("_foreach_").rstrip("_")


class Writes(TorchDispatchMode):
    """Records, per storage, the ops that wrote into it (in-place, `out=` and foreach writes)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_storage: dict[int, list[str]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for index, argument in enumerate(func._schema.arguments):
            if argument.alias_info is None or not argument.alias_info.is_write:
                continue
            positional = index < len(args) and not argument.kwarg_only
            value = args[index] if positional else kwargs.get(argument.name)
            for tensor in value if isinstance(value, list | tuple) else [value]:
                if isinstance(tensor, torch.Tensor):
                    ops = self.by_storage.setdefault(tensor.untyped_storage().data_ptr(), [])
                    ops.append(base_name(func._schema.name))
        return func(*args, **kwargs)

    def into(self, tensor: torch.Tensor) -> list[str]:
        """The ops that wrote into `tensor`'s memory (any view of it counts), in call order."""
        return self.by_storage.get(tensor.untyped_storage().data_ptr(), [])
