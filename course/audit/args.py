"""What the layout auditor calls, and how: ops from torch's registry, arguments from schemas.

Nothing here is a hand-written op list. The ops come from the installed torch's dispatcher
(`torch._C._dispatch_get_all_op_names()`) and their tags: every in-place overload whose op (or
its functional twin) is tagged `pointwise`, plus the in-place random ops (tagged
`nondeterministic_seeded`, taking a `generator=`). Arguments are built from each overload's
`_schema`: tensors in a numeric domain where the op is finite and visibly changes its output,
scalars from the schema's defaults. Whatever cannot be built is skipped with a reason.

Note [Observable writes]
    A kernel that writes nothing is only caught if a correct write would change the output. So
    deterministic ops get a domain where the reference result differs from the input (`abs_` on
    positive numbers would be an identity: we try mixed signs), and random ops get an output
    poisoned with NaN, which no correct random op leaves behind.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import torch

from course.errors import CourseError

SHAPE_2D = (32, 48)  # 1536 elements: enough samples for the random ops' distribution checks
SHAPE_3D = (8, 12, 16)
# Where each non-contiguous layout puts the logical tensor inside a bigger (or reordered) storage.
LAYOUTS = ("transposed", "step-sliced", "permuted-3d", "storage-offset")
CONTROL_LAYOUT = "contiguous"  # not audited by default: the layout every kernel gets right
FLOAT_DOMAINS = ((0.1, 0.9), (-0.9, 0.9), (1.1, 3.0), (-3.0, 3.0))
INT_DOMAINS = ((1, 16), (-16, 16))
DTYPES = (torch.float32, torch.int64, torch.float64)  # float32 first; the others only if it fails
SCALARS = (0.3, 0.7, 0.5)  # successive scalar arguments without defaults (clamp's min < max)


@dataclass(frozen=True)
class AuditOp:
    """One in-place overload to audit: `kind` is "pointwise" (judged by values) or "random"."""

    name: str  # "aten::addcmul_" or "aten::add_.Tensor"
    overload: torch._ops.OpOverload
    kind: str

    @property
    def base(self) -> str:
        """The op without its overload name ("aten::add_" for "aten::add_.Tensor")."""
        return self.name.split(".")[0]


@dataclass
class Call:
    """Arguments for one call: everything after `self`, plus the values `self` starts with."""

    dtype: torch.dtype
    self_values: torch.Tensor  # (shape) on the CPU
    args: list[object]
    kwargs: dict[str, object]

    def on(self, device: str) -> tuple[list[object], dict[str, object]]:
        """The arguments with every tensor moved to `device` (contiguous copies)."""

        def move(value: object) -> object:
            return value.to(device) if isinstance(value, torch.Tensor) else value

        return [move(a) for a in self.args], {k: move(v) for k, v in self.kwargs.items()}


def full_name(overload: torch._ops.OpOverload) -> str:
    """The aten name an audit reports: "aten::addcmul_" or "aten::add_.Tensor"."""
    name = overload._schema.name
    return name if overload._overloadname == "default" else f"{name}.{overload._overloadname}"


@functools.cache
def discover() -> tuple[AuditOp, ...]:
    """Every in-place pointwise and random overload registered in this torch, sorted by name."""
    found = {}
    for qualified in torch._C._dispatch_get_all_op_names():
        overload = _inplace_overload(qualified)
        if overload is None:
            continue
        kind = _kind(overload)
        if kind is not None:
            found[full_name(overload)] = AuditOp(full_name(overload), overload, kind)
    if not any(op.base == "aten::addcmul_" for op in found.values()):
        raise CourseError(
            "found no aten::addcmul_ in this torch's dispatcher: the registry layout "
            f"changed in torch {torch.__version__}; the auditor needs updating"
        )
    return tuple(found[name] for name in sorted(found))


def _inplace_overload(qualified: str) -> torch._ops.OpOverload | None:
    """The OpOverload for a public in-place aten name ("aten::mul_.Tensor"), else None."""
    namespace, _, rest = qualified.partition("::")
    base, _, overload_name = rest.partition(".")
    if namespace != "aten" or not base.endswith("_") or base.startswith("_"):
        return None
    packet = getattr(torch.ops.aten, base, None)
    overload = getattr(packet, overload_name or "default", None) if packet is not None else None
    if overload is None or not _writes_only_self(overload._schema):
        return None
    return overload


def _writes_only_self(schema) -> bool:
    written = [a.name for a in schema.arguments if a.alias_info and a.alias_info.is_write]
    return written == ["self"]


def _kind(overload: torch._ops.OpOverload) -> str | None:
    """ "pointwise" if it or its functional twin is tagged so; "random" for seeded in-place ops."""
    functional = getattr(torch.ops.aten, overload._schema.name.split("::")[1][:-1], None)
    twin = getattr(functional, overload._overloadname, None) if functional is not None else None
    if torch.Tag.pointwise in overload.tags or (twin and torch.Tag.pointwise in twin.tags):
        return "pointwise"
    generator = any(a.name == "generator" and a.kwarg_only for a in overload._schema.arguments)
    if torch.Tag.nondeterministic_seeded in overload.tags and generator:
        return "random"
    return None


def find_ops(names: str | list[str] | None) -> list[AuditOp]:
    """Ops to audit: all, or the named ("addcmul_", "aten::add_.Tensor"; no overload: all)."""
    ops = discover()
    if names is None:
        return list(ops)
    names = [names] if isinstance(names, str) else names
    chosen = []
    for raw in names:
        name = raw if raw.startswith("aten::") else f"aten::{raw}"
        matches = [op for op in ops if name in (op.name, op.base)]
        if not matches:
            sample = ", ".join(op.name for op in ops[:6])
            raise CourseError(
                f"{raw!r} is not an in-place pointwise or random aten op in torch "
                f"{torch.__version__}; e.g. {sample} (see course.audit.core.discover())"
            )
        chosen += [op for op in matches if op not in chosen]
    return chosen


def require_layouts(layouts: str | list[str] | None) -> list[str]:
    """The layouts to audit (default: all four non-contiguous ones), refusing unknown names."""
    if layouts is None:
        return list(LAYOUTS)
    layouts = [layouts] if isinstance(layouts, str) else layouts
    allowed = (*LAYOUTS, CONTROL_LAYOUT)
    for layout in layouts:
        if layout not in allowed:
            raise CourseError(f"unknown layout {layout!r}; choose from: {', '.join(allowed)}")
    return list(layouts)


def logical_shape(layout: str) -> tuple[int, ...]:
    """The shape the op sees under a layout (3-D for the permuted layout, else 2-D)."""
    return SHAPE_3D if layout == "permuted-3d" else SHAPE_2D


def make_output(layout: str, values: torch.Tensor, device: str) -> torch.Tensor:
    """A tensor on `device` equal to `values`, stored with the given layout's strides."""
    shape = tuple(values.shape)
    empty: Callable[..., torch.Tensor] = functools.partial(
        torch.empty, dtype=values.dtype, device=device
    )
    if layout == "transposed":
        out = empty(shape[::-1]).T  # stride (1, rows)
    elif layout == "step-sliced":
        out = empty(shape[0], 2 * shape[1])[:, ::2]  # every other column: stride (2 * cols, 2)
    elif layout == "permuted-3d":
        out = empty(shape[2], shape[0], shape[1]).permute(1, 2, 0)  # stride (cols, 1, rows*cols)
    elif layout == "storage-offset":
        out = empty(values.numel() + 7)[7:].view(shape)  # contiguous, but starts 7 elements in
    else:
        out = empty(shape)
    out.copy_(values)
    return out


def build_call(op: AuditOp, shape: tuple[int, ...]) -> Call | str:
    """Arguments under which `op` is finite and changes its output; or a reason to skip it."""
    reasons = []
    for dtype in DTYPES:
        domains = FLOAT_DOMAINS if dtype.is_floating_point else INT_DOMAINS
        best: tuple[float, Call] | None = None
        for domain in domains:
            call = _candidate(op, shape, dtype, domain)
            if isinstance(call, str):
                reasons.append(call)
                break  # an argument this builder cannot make: no domain will help
            changed = _observable_fraction(op, call)
            if isinstance(changed, str):
                reasons.append(changed)
            elif best is None or changed > best[0]:
                best = (changed, call)
        if best is not None and best[0] > 0:
            return best[1]
    last = reasons[-1] if reasons else "the op leaves its input unchanged in every domain tried"
    return f"no callable, observable configuration found ({last})"


def _candidate(op: AuditOp, shape, dtype: torch.dtype, domain) -> Call | str:
    gen = torch.Generator().manual_seed(0)
    values = functools.partial(_values, shape=shape, dtype=dtype, domain=domain, gen=gen)
    scalars = itertools.cycle(SCALARS if dtype.is_floating_point else (3, 5, 7))
    args, kwargs = [], {}
    for argument in op.overload._schema.arguments[1:]:
        value = _argument(argument, values, scalars)
        if isinstance(value, Unbuildable):
            return value.reason
        if argument.kwarg_only:
            kwargs[argument.name] = value
        else:
            args.append(value)
    self_values = (
        torch.full(shape, float("nan"), dtype=dtype)
        if op.kind == "random" and dtype.is_floating_point
        else values()
    )
    return Call(dtype, self_values, args, kwargs)


def _values(shape, dtype: torch.dtype, domain, gen: torch.Generator) -> torch.Tensor:
    low, high = domain
    if dtype.is_floating_point:
        uniform = torch.rand(shape, generator=gen, dtype=torch.float64)
        return (uniform * (high - low) + low).to(dtype)
    return torch.randint(low, high, shape, generator=gen, dtype=dtype)


@dataclass(frozen=True)
class Unbuildable:
    """Why an argument could not be built (a plain str could be a legitimate str argument)."""

    reason: str


def _type_name(argument) -> str:
    """The schema type as written in native_functions.yaml: "Scalar", "float?", "Tensor"..."""
    text = str(argument.type).replace("number", "Scalar")
    return text[len("Optional[") : -1] + "?" if text.startswith("Optional[") else text


def _argument(argument, values: Callable[[], torch.Tensor], scalars):
    """One schema argument's value: see Note [Observable writes]."""
    kind = _type_name(argument)
    if argument.name == "generator":
        return None
    if argument.name == "mask" and kind == "Tensor":
        return values() > values()  # a random boolean mask
    if kind in ("Tensor", "Tensor?"):
        return values()
    if argument.has_default_value() and argument.default_value is not None:
        return argument.default_value
    if kind in ("Scalar", "Scalar?", "float", "float?"):
        return next(scalars)  # numeric bounds (clamp's min/max, logit's eps) get values too
    if kind == "int":
        return 3  # polygamma's n, round's decimals, random_'s bounds: small and valid
    if kind == "bool":
        return False
    if kind.endswith("?"):
        return None
    return Unbuildable(f"cannot build argument {argument.name!r} of type {kind}")


def _observable_fraction(op: AuditOp, call: Call) -> float | str:
    """The share of elements a correct write changes (random ops: all), or why the call failed."""
    try:
        result = reference(op, call)
    except Exception as exc:  # any failure means "not this dtype/domain": keep the reason
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    if op.kind == "random":
        return 1.0
    if result.dtype.is_floating_point and not torch.isfinite(result).all():
        return 0.0
    return (result != call.self_values).double().mean().item()


def reference(op: AuditOp, call: Call, seed: int = 0) -> torch.Tensor:
    """The op on a contiguous CPU copy of `self`: what every layout on every device should give."""
    out = call.self_values.clone()
    torch.manual_seed(seed)
    op.overload(out, *call.args, **call.kwargs)
    return out
