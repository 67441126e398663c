"""What notebook 03's checkers share: seeing how the learner's code ran, not only what it said.

`OpWatch` logs every call of one of Adam's four in-place ops (its device, the profile in force,
the layouts of its output and inputs, what of the CPU's answer arrived), so a checker can tell
an experiment that measured from one that answered from memory, ran on the CPU or never varied
the layout it claims to test. `Writes` logs which op wrote into which memory, so a step that
reaches torch's numbers with other ops (`sub_`, `copy_` of an out-of-place result) is told it is
not torch's step: on the CPU the bits agree, on the story's device each op is its own kernel.
The experiments are run (`measure`) on the story's profiles and on backends made for the checks,
each one something a wrong experiment cannot see, against the truth measured there (`arrives`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from course import emps
from course.adam import op_isolation
from course.adam.op_isolation import OP_CALLS, OPS
from course.emps.copies import copy_back, gather
from course.emps.mps_kernels import Kernel, KernelCall, same_bits, write_through_placeholder
from course.exercises import Verdict, failed, ready_made
from course.layout.named import has_layout, laid_out

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


class Writes(TorchDispatchMode):
    """Records, per storage, the ops that wrote into it (in-place, `out=` and foreach writes)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_storage: dict[int, list[str]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        # the op's base name: 'addcdiv' for addcdiv_, addcdiv (out=) and _foreach_addcdiv_ alike
        name = func._schema.name.removeprefix("aten::").removeprefix("_foreach_").rstrip("_")
        for index, argument in enumerate(func._schema.arguments):
            if argument.alias_info is None or not argument.alias_info.is_write:
                continue
            positional = index < len(args) and not argument.kwarg_only
            value = args[index] if positional else kwargs.get(argument.name)
            for tensor in value if isinstance(value, list | tuple) else [value]:
                if isinstance(tensor, torch.Tensor):
                    ops = self.by_storage.setdefault(tensor.untyped_storage().data_ptr(), [])
                    ops.append(name)
        return func(*args, **kwargs)

    def into(self, tensor: torch.Tensor) -> list[str]:
        """The ops that wrote into `tensor`'s memory (any view of it counts), in call order."""
        return self.by_storage.get(tensor.untyped_storage().data_ptr(), [])


READY_MADE_EXPERIMENTS = {  # the course's own experiment: it measures, on the story's profile only
    "course.adam.op_isolation.isolate": op_isolation.isolate,
    "course.adam.op_isolation.isolation_table": op_isolation.isolation_table,
}
# Profiles made for the checks: one family broken alone, and a list that is not what happens.
ONLY_ADDCMUL = emps.TORCH_2_2_1.with_broken({"addcmul"}, name="hidden-addcmul-only")
STRIDED_LISTED = emps.MACOS15.with_broken(emps.ADAM_FAMILIES, name="hidden-strided-listed")
HIDDEN_KERNELS: dict[str, dict[str, Kernel]] = {}  # a made profile's name: its kernels


def copying_back(write: Callable[[torch.Tensor, torch.Tensor], None]) -> Kernel:
    """A kernel made for the check: it computes like a working kernel (into a contiguous copy
    of a non-contiguous output), then `write(output, result)` is all of its copy-back."""

    def kernel(call: KernelCall) -> None:
        needs_copy = not call.output.is_contiguous()
        result = gather(call.output) if needs_copy else call.output
        call.temporaries += int(needs_copy)
        call.run_graph(call.placeholder(result), [call.placeholder(t) for t in call.inputs])
        if needs_copy:
            write(call.output, result)

    return kernel


def _made_for_the_check(
    name: str, what: str, broken: frozenset[str] = emps.TORCH_2_4.broken, **kernels: Kernel
) -> emps.Profile:
    """PyTorch 2.4's profile, renamed, with other broken families or kernels of its own."""
    label = f"a backend made for this check ({what})"
    HIDDEN_KERNELS[name] = kernels
    return replace(emps.TORCH_2_4, name=name, label=label, description=label, broken=broken)


LERP_LOST = _made_for_the_check("hidden-lerp-lost", "lerp_ broken", lerp=write_through_placeholder)
FIRST_ROW = _made_for_the_check(  # the rest of the output keeps its old values
    "hidden-first-row",
    "a partial copy-back",
    addcdiv=copying_back(lambda out, result: copy_back(out[:1], result[:1])),
)
ROW_SKIPPED = _made_for_the_check(  # "did it change?" or the last row sees an update
    "hidden-row-skipped",
    "a copy-back that starts late",
    lerp=copying_back(lambda out, result: copy_back(out[1:], result[1:])),
)
ROUNDED = _made_for_the_check(  # each element one float32 step above the CPU's answer
    "hidden-rounded",
    "a result rounded differently",
    addcmul=copying_back(
        lambda out, r: copy_back(out, torch.nextafter(r, torch.full_like(r, torch.inf)))
    ),
)
SEVERAL_LOST = _made_for_the_check(  # a profile, not kernels, so that on_profile runs it too
    "hidden-several-lost", "several kernels broken", emps.TORCH_2_2_1.broken | {"lerp", "mul"}
)


def backend(profile: emps.Profile) -> emps.Backend:
    """The backend a case runs on: the profile, with any kernels made for the check."""
    return emps.Backend(profile, overrides=HIDDEN_KERNELS.get(profile.name, {}))


def measure(fn: Callable, profile: emps.Profile, *args) -> tuple[object, OpWatch, list[str]]:
    """Run the learner's experiment with `profile` in force: its answer, its op calls, and the
    ready-made experiments it called."""
    setting = emps.use_backend(backend(profile))
    with setting, ready_made(READY_MADE_EXPERIMENTS) as used, OpWatch() as watch:
        got = fn(*args)
    return got, watch, used


def arrives(op: str, output_layout: str, input_layout: str) -> str:
    """The truth, measured on the backend in force: the op run once on non-zero values in the
    layouts named, 'updates' when the output then holds the CPU's answer to the bit."""
    gen = torch.Generator().manual_seed(0)
    start, a = torch.randn(6, 4, generator=gen), torch.randn(6, 4, generator=gen)
    b = torch.rand(6, 4, generator=gen) + 0.5
    expected = start.clone()
    OP_CALLS[op](expected, a, b)
    out = laid_out(start, output_layout, emps.DEVICE)
    OP_CALLS[op](out, *(laid_out(t, input_layout, emps.DEVICE) for t in (a, b)))
    return "updates" if torch.equal(out.cpu(), expected) else "lost"


def course_experiment(used: list[str]) -> Verdict | None:
    """The course's own experiment called inside the learner's: named, whatever it answered."""
    if not used:
        return None
    return failed(
        f"your function called {used[0]}, the course's own experiment: it runs on the story's "
        "profile whatever profile is in force, and tests nothing you wrote. Write the "
        "experiment: lay out the tensors, run OP_CALLS[op] on the emulated device, compare."
    )
