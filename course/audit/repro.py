"""One line per finding that a person can paste into a Python prompt, or into a bug report.

For a real device ("cpu", "cuda", "mps") the line is plain PyTorch: it builds the values, lays the
output out on the device, calls the exact aten overload, and prints how many elements disagree
with the op's out-of-place twin on CPU copies (float64 for floats; random ops: how many poisoned
elements were never written). Statements are joined by "; " and each stays under 100 characters,
so printed one per line the line fits a notebook cell. For the emulated device, which is this
course's and not PyTorch's, the line is the CLI call that repeats the finding; for an emulated
backend the command line cannot rebuild (a case's planted device), it is the plain PyTorch line
on the emulated device, to run where that backend is active (`with case.use_device():`).
"""

from __future__ import annotations

import math

import torch

from course.audit.args import SELF, AuditOp, Call, dtype_name
from course.audit.judge import TOLERANCE
from course.audit.knobs import Knobs
from course.layout.named import OFFSET


def _output(layout: str, shape: tuple[int, ...], d: str, dt: str, poison: str) -> str:
    """How `y` (what the op writes) is made on device `d` from the contiguous CPU values `x`."""
    dims, rank = ", ".join(map(str, shape)), len(shape)
    flipped = ", ".join(map(str, reversed(shape)))
    turn = ".T" if rank == 2 else f".permute({', '.join(map(str, reversed(range(rank))))})"
    if layout == "transposed":
        return f"y = torch.empty({flipped}, dtype={dt}, device={d}){turn}.copy_(x)"
    if layout == "step-sliced":
        wide = ", ".join(map(str, (*shape[:-1], 2 * shape[-1])))
        cut = "[:, ::2]" if rank == 2 else "[..., ::2]"
        return f"y = torch.empty({wide}, dtype={dt}, device={d}){cut}.copy_(x)"
    if layout == "storage-offset":
        size = OFFSET + math.prod(shape)
        return f"y = torch.empty({size}, dtype={dt}, device={d})[{OFFSET}:].view({dims}).copy_(x)"
    if layout == "permuted":
        stored = ", ".join(map(str, (shape[2], shape[0], shape[1])))
        return f"y = torch.empty({stored}, dtype={dt}, device={d}).permute(1, 2, 0).copy_(x)"
    if layout == "channels-last":
        return f"y = x.to({d}, copy=True).contiguous(memory_format=torch.channels_last)"
    if layout == "out=transposed":
        size = f"({flipped})" if rank > 1 else f"({flipped},)"
        return f"y = torch.full({size}, {poison}, dtype={dt}, device={d}){turn}"
    return f"y = x.to({d}, copy=True)"  # contiguous, expanded


def reproduction(op: AuditOp, call: Call, layout: str, device: str, emulated: str = "") -> str:
    """The line for one (op, dtype, layout) on `device`; `emulated` names an emulated profile.

    With the auditor's knobs (`call.knobs`) the line uses their shape, scalars and inputs.
    """
    dtype = dtype_name(call.dtype)
    knobs = call.knobs or Knobs()
    if emulated:
        flags = f" {knobs.flags()}" if not knobs.default else ""
        return (
            f"python -m course audit --device {emulated} --op {op.name.removeprefix('aten::')} "
            f"--dtype {dtype} --layout {layout}{flags}"
        )
    shape = knobs.shape_for(layout)
    d, dt = repr(device), f"torch.{dtype}"
    names, tensors = _names(call)
    parts = ["import torch", "torch.manual_seed(0)", f"x = {_self(op, call, shape)}"]
    rows = (1, shape[-1]) if layout == "expanded" else shape
    rows = (shape[-1],) if knobs.inputs == "broadcast" else rows
    parts += [f"{name} = {_values(t.dtype, call, rows)}" for name, t in tensors]
    poison = "float('nan')" if call.dtype.is_floating_point else "torch.iinfo(torch.int64).min"
    parts.append(_output(layout, shape, d, dt, poison))
    expand = f".expand{shape}" if layout == "expanded" else ""
    parts += [f"d{n[1:]} = {n}.to({d}){expand}" for n, _ in tensors]  # the inputs, on the device
    on_device = _call_text(call, names, lambda n: f"d{n[1:]}", "y")
    if layout == "out=transposed":
        parts.append(f"torch.ops.{_qualified(op.out)}(x.to({d}), {on_device}, out=y)")
    else:
        parts.append(f"torch.ops.{_qualified(op.overload)}(y, {on_device})")
    if op.kind == "random":
        kept = "y.cpu().isnan()" if call.dtype.is_floating_point else "(y.cpu() == x)"
        return "; ".join([*parts, f"n = {kept}.sum().item()", _PRINT.format("never written")])
    parts += [f"c{n[1:]} = {n}.{_widened(t)}{expand}" for n, t in tensors]  # CPU copies
    widened = f"x.{_widened(call.self_values)}"
    on_cpu = _call_text(call, names, lambda n: f"c{n[1:]}", widened)
    reference = op.functional or op.overload
    parts.append(f"r = torch.ops.{_qualified(reference)}({widened}, {on_cpu})")
    if call.dtype.is_floating_point:
        rtol, atol = TOLERANCE.get(call.dtype, (1e-6, 1e-7))
        close = f"torch.isclose(y.cpu().double(), r.double(), rtol={rtol:g}, atol={atol:g})"
        parts.append(f"n = (~{close}).sum().item()")
    else:
        parts.append("n = (y.cpu() != r).sum().item()")
    return "; ".join([*parts, _PRINT.format("elements differing")])


_PRINT = "print('{}:', n, 'of', y.numel())"


def _widened(tensor: torch.Tensor) -> str:
    """How the CPU reference copies a tensor: float64 for floats, as it is otherwise."""
    return "double()" if tensor.dtype.is_floating_point else "clone()"


def _qualified(overload) -> str:
    """aten.addcmul_.default for the OpOverload aten::addcmul_."""
    return f"aten.{overload._schema.name.split('::')[1]}.{overload._overloadname}"


def _names(call: Call) -> tuple[dict[int, str], list]:
    """Names t1, t2, ... for the tensor arguments, keyed by their position among all arguments."""
    values = [*call.args, *call.kwargs.values()]
    names, tensors = {}, []
    for position, value in enumerate(values):
        if isinstance(value, torch.Tensor):
            names[position] = f"t{len(tensors) + 1}"
            tensors.append((names[position], value))
    return names, tensors


def _self(op: AuditOp, call: Call, shape: tuple[int, ...]) -> str:
    if op.kind == "random":
        fill = "float('nan')" if call.dtype.is_floating_point else "torch.iinfo(torch.int64).min"
        return f"torch.full({shape}, {fill}, dtype=torch.{dtype_name(call.dtype)})"
    return _values(call.dtype, call, shape)


def _values(dtype, call: Call, shape: tuple[int, ...]) -> str:
    if dtype == torch.bool:
        return f"torch.rand{shape} < 0.5"
    low, high = call.domain or (0, 1)
    if dtype.is_floating_point:
        text = f"torch.rand{shape} * {high - low:g} + {low:g}"
        return text if dtype_name(dtype) == "float32" else f"({text}).to(torch.{dtype_name(dtype)})"
    return f"torch.randint({low}, {high}, {shape})"


def _call_text(call: Call, names: dict[int, str], tensor_text, self_text: str) -> str:
    """The arguments after self (and before out=), tensors by name, others as Python literals;
    an aliased operand (SELF) is `self_text`, the written tensor itself."""
    values = [*call.args, *call.kwargs.values()]
    keys = [None] * len(call.args) + list(call.kwargs)
    texts = []
    for position, (key, value) in enumerate(zip(keys, values, strict=True)):
        if key == "generator":
            continue
        text = tensor_text(names[position]) if position in names else repr(value)
        text = self_text if value is SELF else text
        texts.append(text if key is None else f"{key}={text}")
    return ", ".join(texts)
