"""One line per finding that a person can paste into a Python prompt, or into a bug report.

For a real device ("cpu", "cuda", "mps") the line is plain PyTorch: it builds the values, lays the
output out on the device, calls the exact aten overload, and prints how many elements disagree
with the op's out-of-place twin on CPU copies (float64 for floats; random ops: how many poisoned
elements were never written). Statements are joined by "; " and each stays under 100 characters,
so printed one per line the line fits a notebook cell. For the emulated device, which is this
course's and not PyTorch's, the line is the CLI call that repeats the finding.
"""

from __future__ import annotations

import torch

from course.audit.args import SHAPES, AuditOp, Call, dtype_name
from course.audit.judge import TOLERANCE
from course.layout.named import DIMS

# How `y` (what the op writes) is made on device D from the contiguous CPU values `x`.
_OUTPUT = {
    "contiguous": "y = x.to({d}, copy=True)",
    "expanded": "y = x.to({d}, copy=True)",
    "transposed": "y = torch.empty(48, 32, dtype={dt}, device={d}).T.copy_(x)",
    "step-sliced": "y = torch.empty(32, 96, dtype={dt}, device={d})[:, ::2].copy_(x)",
    "storage-offset": "y = torch.empty(1543, dtype={dt}, device={d})[7:].view(32, 48).copy_(x)",
    "permuted": "y = torch.empty(16, 8, 12, dtype={dt}, device={d}).permute(1, 2, 0).copy_(x)",
    "channels-last": "y = x.to({d}, copy=True).contiguous(memory_format=torch.channels_last)",
    "out=transposed": "y = torch.full((48, 32), {poison}, dtype={dt}, device={d}).T",
}


def reproduction(op: AuditOp, call: Call, layout: str, device: str, emulated: str = "") -> str:
    """The line for one (op, dtype, layout) on `device`; `emulated` names an emulated profile."""
    dtype = dtype_name(call.dtype)
    if emulated:
        return (
            f"python -m course audit --device {emulated} --op {op.name.removeprefix('aten::')} "
            f"--dtype {dtype} --layout {layout}"
        )
    shape = SHAPES[DIMS.get(layout, 2)]
    d, dt = repr(device), f"torch.{dtype}"
    names, tensors = _names(call)
    parts = ["import torch", "torch.manual_seed(0)", f"x = {_self(op, call, shape)}"]
    rows = (1, shape[-1]) if layout == "expanded" else shape
    parts += [f"{name} = {_values(t.dtype, call, rows)}" for name, t in tensors]
    poison = "float('nan')" if call.dtype.is_floating_point else "torch.iinfo(torch.int64).min"
    parts.append(_OUTPUT[layout].format(d=d, dt=dt, poison=poison))
    expand = f".expand{shape}" if layout == "expanded" else ""
    parts += [f"d{n[1:]} = {n}.to({d}){expand}" for n, _ in tensors]  # the inputs, on the device
    on_device = _call_text(call, names, lambda n: f"d{n[1:]}")
    if layout == "out=transposed":
        parts.append(f"torch.ops.{_qualified(op.out)}(x.to({d}), {on_device}, out=y)")
    else:
        parts.append(f"torch.ops.{_qualified(op.overload)}(y, {on_device})")
    if op.kind == "random":
        kept = "y.cpu().isnan()" if call.dtype.is_floating_point else "(y.cpu() == x)"
        return "; ".join([*parts, f"n = {kept}.sum().item()", _PRINT.format("never written")])
    parts += [f"c{n[1:]} = {n}.{_widened(t)}{expand}" for n, t in tensors]  # CPU copies
    on_cpu = _call_text(call, names, lambda n: f"c{n[1:]}")
    reference = op.functional or op.overload
    parts.append(f"r = torch.ops.{_qualified(reference)}(x.{_widened(call.self_values)}, {on_cpu})")
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


def _call_text(call: Call, names: dict[int, str], tensor_text) -> str:
    """The arguments after self (and before out=), tensors by name, others as Python literals."""
    values = [*call.args, *call.kwargs.values()]
    keys = [None] * len(call.args) + list(call.kwargs)
    texts = []
    for position, (key, value) in enumerate(zip(keys, values, strict=True)):
        if key == "generator":
            continue
        text = tensor_text(names[position]) if position in names else repr(value)
        texts.append(text if key is None else f"{key}={text}")
    return ", ".join(texts)
