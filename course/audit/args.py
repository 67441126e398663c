"""What the layout auditor calls, and how: ops from torch's registry, arguments from schemas.

Nothing here is a hand-written op list. The ops come from the installed torch's dispatcher
(`torch._C._dispatch_get_all_op_names()`) and their tags: every in-place overload whose op (or
its functional twin) is tagged `pointwise`, plus the in-place random ops (tagged
`nondeterministic_seeded`, taking a `generator=`). For each one the schemas also give its
functional twin (`add_.Tensor` -> `add.Tensor`, the independent reference) and its `out=` variant
(`add.out`). Arguments are built per dtype from the overload's `_schema`: tensors in a numeric
domain where the op is finite and visibly changes its output, scalars that are *not* the schema's
defaults (a kernel that ignores `alpha=` or `value=` must give a different answer). Whatever
cannot be built is skipped with a reason.

Note [Observable writes]
    A kernel that writes nothing is only caught if a correct write would change the output. So
    deterministic ops get a domain where the reference result differs from the input (`abs_` on
    positive numbers would be an identity: we try mixed signs), and random ops and `out=` outputs
    start poisoned (NaN, or the integer minimum), which no correct write leaves behind.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import torch

from course.audit.distributions import PROBABILITIES, RANDOM_OPS, Law, law_of, unsupported
from course.errors import CourseError

SHAPES = {2: (32, 48), 3: (8, 12, 16), 4: (2, 8, 8, 12)}  # 1536 elements each: enough samples
# for the random ops' distribution checks, small enough for a sweep of every op in seconds
DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "bool": torch.bool,
}
FLOAT_DOMAINS = ((0.1, 0.9), (-0.9, 0.9), (1.1, 3.0), (-3.0, 3.0))
INT_DOMAINS = ((1, 16), (-16, 16))
SCALARS = {"float": (0.3, 0.7, 0.5), "int": (3, 5, 7), "bool": (True,)}  # clamp's min < max


@dataclass(frozen=True)
class AuditOp:
    """One in-place overload to audit: `kind` is "pointwise" (judged by values) or "random"."""

    name: str  # "aten::addcmul_" or "aten::add_.Tensor"
    overload: torch._ops.OpOverload
    kind: str
    functional: torch._ops.OpOverload | None = None  # same arguments, returns a new tensor
    out: torch._ops.OpOverload | None = None  # same arguments plus `out=`

    @property
    def base(self) -> str:
        """The op without its overload name ("aten::add_" for "aten::add_.Tensor")."""
        return self.name.split(".")[0]


@dataclass(frozen=True)
class Call:
    """Arguments for one call: everything after `self`, and the values `self` starts with.

    Every tensor is a contiguous CPU tensor; `shaped` and `expanded` derive the variants the
    layouts need (the same values seen as 3-D or 4-D, or inputs with one row broadcast).
    """

    dtype: torch.dtype
    self_values: torch.Tensor
    args: tuple[object, ...]
    kwargs: dict[str, object]
    domain: tuple = ()  # the (low, high) range the values come from
    knobs: object = None  # a course.audit.knobs.Knobs: a learner's sizes and inputs, or None

    @property
    def tensor_inputs(self) -> bool:
        """Whether any argument besides `self` is a tensor (else "expanded" does not apply)."""
        return any(isinstance(v, torch.Tensor) for v in (*self.args, *self.kwargs.values()))

    def map_tensors(self, fn: Callable[[torch.Tensor], torch.Tensor], self_too: bool) -> Call:
        """The same call with `fn` applied to every tensor argument (and to `self` if asked)."""

        def each(value: object) -> object:
            return fn(value) if isinstance(value, torch.Tensor) else value

        return replace(
            self,
            self_values=fn(self.self_values) if self_too else self.self_values,
            args=tuple(each(a) for a in self.args),
            kwargs={k: each(v) for k, v in self.kwargs.items()},
        )

    def shaped(self, shape: tuple[int, ...]) -> Call:
        """The same values seen in another shape with as many elements (pointwise ops)."""
        return self.map_tensors(lambda t: t.reshape(shape), self_too=True)

    def expanded(self) -> Call:
        """Every tensor input's first row repeated, so it can be passed with stride 0."""
        return self.map_tensors(lambda t: t[:1].expand_as(t).contiguous(), self_too=False)


class _Self:
    """Marks an argument that is the written tensor itself (course.audit.knobs: aliased)."""

    def __repr__(self) -> str:
        return "self"


SELF = _Self()


def resolved(call: Call, written: torch.Tensor) -> Call:
    """The call with every SELF argument replaced by `written` (the same tensor object)."""

    def each(value: object) -> object:
        return written if value is SELF else value

    return replace(
        call,
        args=tuple(each(a) for a in call.args),
        kwargs={k: each(v) for k, v in call.kwargs.items()},
    )


def full_name(overload: torch._ops.OpOverload) -> str:
    """The aten name an audit reports: "aten::addcmul_" or "aten::add_.Tensor"."""
    name = overload._schema.name
    return name if overload._overloadname == "default" else f"{name}.{overload._overloadname}"


def dtype_name(dtype: torch.dtype) -> str:
    """ "float32" for torch.float32: the name results and the CLI use."""
    return str(dtype).removeprefix("torch.")


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
            functional, out = _twins(overload)
            found[full_name(overload)] = AuditOp(
                full_name(overload), overload, kind, functional, out
            )
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


def _functional_packet(overload: torch._ops.OpOverload):
    """torch.ops.aten.add for aten::add_ (None if the op has no functional form)."""
    return getattr(torch.ops.aten, overload._schema.name.split("::")[1][:-1], None)


def _kind(overload: torch._ops.OpOverload) -> str | None:
    """ "pointwise" if it or its functional twin is tagged so; "random" for seeded in-place ops."""
    functional = _functional_packet(overload)
    twin = getattr(functional, overload._overloadname, None) if functional is not None else None
    if torch.Tag.pointwise in overload.tags or (twin and torch.Tag.pointwise in twin.tags):
        return "pointwise"
    generator = any(a.name == "generator" and a.kwarg_only for a in overload._schema.arguments)
    if torch.Tag.nondeterministic_seeded in overload.tags and generator:
        return "random"
    return None


def _signature(arguments: Iterable) -> list[tuple[str, str, bool]]:
    return [(a.name, str(a.type), a.kwarg_only) for a in arguments]


def _twins(overload: torch._ops.OpOverload):
    """The functional twin and the out= variant taking exactly the in-place op's arguments."""
    packet = _functional_packet(overload)
    if packet is None:
        return None, None
    wanted = _signature(overload._schema.arguments)
    functional = out = None
    for name in packet.overloads():
        candidate = getattr(packet, name)
        arguments = candidate._schema.arguments
        plain = [a for a in arguments if not a.is_out]
        if _signature(plain) != wanted:
            continue
        if len(plain) == len(arguments) and name == overload._overloadname:
            functional = candidate
        elif len(arguments) == len(plain) + 1 and arguments[-1].name == "out":
            out = candidate
    return functional, out


def find_ops(names: str | list[str] | None) -> list[AuditOp]:
    """Ops to audit: all, or the named ("addcmul_", "aten::add_.Tensor"; no overload: all)."""
    ops = discover()
    if names is None:
        return list(ops)
    chosen = []
    for raw in _names("op", names):
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


def find_dtypes(names: str | list[str] | None) -> list[torch.dtype]:
    """The dtypes to audit (default: all of DTYPES, each where the op supports it)."""
    if names is None:
        return list(DTYPES.values())
    chosen = []
    for name in _names("dtype", names):
        if name not in DTYPES:
            raise CourseError(f"unknown dtype {name!r}; choose from: {', '.join(DTYPES)}")
        chosen.append(DTYPES[name])
    return chosen


def _names(what: str, names: object) -> list[str]:
    """A list of names from one name or a list of them, refusing anything else."""
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, (list, tuple, set, frozenset)) or not names:
        raise CourseError(f"give {what} names as a string or a non-empty list, not {names!r}")
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise CourseError(f"{what} names must be strings such as 'float32'; got {bad[0]!r}")
    return list(names)


def build_call(
    op: AuditOp,
    dtype: torch.dtype,
    hint: tuple | None = None,
    scalars: tuple[float, ...] | None = None,
) -> Call | str:
    """Arguments under which `op` is finite and changes its output in `dtype`; or why not.

    `hint` is a domain to try first (float16 reuses what float32 found); `scalars`, a learner's
    own numbers for the scalar arguments (course.audit.knobs), in place of SCALARS: the domain
    is then one where *they* change the output. Random ops get the arguments
    `course.audit.distributions` chose for them, without running any kernel: whether the op
    supports the dtype must not depend on the kernel under audit.
    """
    if op.kind == "random":
        return _random_call(op, dtype)
    domains = _domains(dtype)
    if hint in domains:
        domains = (hint, *[d for d in domains if d != hint])
    reasons, best = [], None
    for domain in domains:
        call = _candidate(op, dtype, domain, scalars)
        if isinstance(call, str):
            return call  # an argument this builder cannot make: no domain will help
        changed = _observable_fraction(op, call)
        if isinstance(changed, str):
            reasons.append(changed)
        elif best is None or changed > best[0]:
            best = (changed, call)
        if best is not None and best[0] == 1.0:
            break
    if best is not None and best[0] > 0:
        return best[1]
    return reasons[-1] if reasons else "the op leaves its input unchanged in every domain tried"


def _domains(dtype: torch.dtype) -> tuple:
    if dtype == torch.bool:
        return ((0, 2),)
    return FLOAT_DOMAINS if dtype.is_floating_point else INT_DOMAINS


def _candidate(op: AuditOp, dtype: torch.dtype, domain, chosen=None) -> Call | str:
    gen = torch.Generator().manual_seed(0)
    values = functools.partial(_values, dtype=dtype, domain=domain, gen=gen)
    family = "float" if dtype.is_floating_point else ("bool" if dtype == torch.bool else "int")
    scalars = itertools.cycle(chosen or SCALARS[family])
    scalars_left = 1 if chosen else len(SCALARS[family])  # a learner's numbers, as they are
    args, kwargs = [], {}
    for argument in op.overload._schema.arguments[1:]:
        value = _argument(argument, values, scalars, scalars_left)
        if isinstance(value, Unbuildable):
            return value.reason
        if argument.kwarg_only:
            kwargs[argument.name] = value
        else:
            args.append(value)
    return Call(dtype, values(), tuple(args), kwargs, domain)


def _random_call(op: AuditOp, dtype: torch.dtype) -> Call | str:
    """A random op's call: its chosen arguments, probabilities for a tensor `p`, poisoned self."""
    reason = unsupported(op.name, dtype)
    if reason:
        return reason
    chosen = RANDOM_OPS[op.name].arguments
    gen = torch.Generator().manual_seed(1)  # not the kernel's seed: p would mirror its draws
    args, kwargs = [], {}
    for argument in op.overload._schema.arguments[1:]:
        if argument.name == "generator":
            value = None  # the caller passes a private generator
        elif argument.name in chosen:
            value = chosen[argument.name]
        elif _type_name(argument) == "Tensor":
            value = _values(dtype, PROBABILITIES, gen)
        else:
            return f"cannot build argument {argument.name!r} of {op.name}"
        (kwargs.__setitem__(argument.name, value) if argument.kwarg_only else args.append(value))
    return Call(dtype, poison(SHAPES[2], dtype), tuple(args), kwargs, PROBABILITIES)


def poison(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """Values no correct write leaves behind: NaN, or the integer minimum."""
    if dtype.is_floating_point:
        return torch.full(shape, float("nan"), dtype=dtype)
    return torch.full(shape, torch.iinfo(dtype).min, dtype=dtype)


def _values(dtype: torch.dtype, domain, gen: torch.Generator) -> torch.Tensor:
    low, high = domain
    if dtype == torch.bool:
        return torch.rand(SHAPES[2], generator=gen) < 0.5
    if dtype.is_floating_point:
        uniform = torch.rand(SHAPES[2], generator=gen, dtype=torch.float64)
        return (uniform * (high - low) + low).to(dtype)
    return torch.randint(low, high, SHAPES[2], generator=gen, dtype=dtype)


@dataclass(frozen=True)
class Unbuildable:
    """Why an argument could not be built (a plain str could be a legitimate str argument)."""

    reason: str


def _type_name(argument) -> str:
    """The schema type as written in native_functions.yaml: "Scalar", "float?", "Tensor"..."""
    text = str(argument.type).replace("number", "Scalar")
    return text[len("Optional[") : -1] + "?" if text.startswith("Optional[") else text


def _argument(argument, values: Callable[[], torch.Tensor], scalars, count: int):
    """One schema argument's value: see Note [Observable writes]."""
    kind = _type_name(argument)
    default = argument.default_value if argument.has_default_value() else None
    if argument.name == "generator":
        return None  # the caller passes a private generator
    if argument.name == "mask" and kind == "Tensor":
        return torch.rand(SHAPES[2], generator=torch.Generator().manual_seed(1)) < 0.5
    if kind in ("Tensor", "Tensor?"):
        return values()
    if kind in ("Scalar", "Scalar?", "float", "float?"):
        value = next(scalars)
        for _ in range(count - 1):  # never the default if another value exists: see above
            if value != default:
                break
            value = next(scalars)
        return value
    if default is not None:
        return default
    if kind == "int":
        return 3  # polygamma's n, round's decimals, random_'s bounds: small and valid
    if kind == "bool":
        return False
    if kind.endswith("?"):
        return None
    return Unbuildable(f"cannot build argument {argument.name!r} of type {kind}")


def _observable_fraction(op: AuditOp, call: Call) -> float | str:
    """The share of elements a correct write changes, or why the call failed."""
    try:
        result = expected_values(op, call)
    except Exception as exc:  # any failure means "not this dtype/domain": keep the reason
        return describe(exc)
    if result.dtype.is_floating_point and not torch.isfinite(result).all():
        return 0.0
    return (result != call.self_values).double().mean().item()


def describe(exc: BaseException) -> str:
    """One line for an exception: its type and the first line of its message."""
    lines = str(exc).strip().splitlines() or [""]
    return f"{type(exc).__name__}: {lines[0][:160]}"


def seeded(device: str = "cpu") -> torch.Generator:
    """A private generator (random ops never touch the learner's global RNG)."""
    return torch.Generator(device=device).manual_seed(0)


def expected_values(op: AuditOp, call: Call) -> torch.Tensor:
    """What `self` should hold after a deterministic op: an independent reference where one exists.

    Deterministic ops are judged against their decomposition, `self.copy_(op(self, ...))`, with
    the functional twin on the CPU: another kernel entry than the in-place one under audit, so a
    CPU kernel that is wrong on every layout is still caught. (A float64 computation would be
    independent too, but rounds scalars and discontinuous ops such as `fmod` or `nextafter`
    differently from the dtype's own arithmetic.) Ops without a functional twin fall back to the
    in-place op on a contiguous CPU copy. Random ops have no expected values: see `expected`.
    """
    if op.functional is not None:
        call = resolved(call, call.self_values)  # an aliased operand is self's own values
        result = op.functional(call.self_values, *call.args, **call.kwargs)
        if not torch.can_cast(result.dtype, call.dtype):
            raise CourseError(
                f"{op.name} on {dtype_name(call.dtype)} gives {dtype_name(result.dtype)}, which "
                "an in-place op cannot store"
            )
        return result.to(call.dtype)
    out = call.self_values.clone()
    call = resolved(call, out)
    op.overload(out, *call.args, **call.kwargs)
    return out


def expected(op: AuditOp, call: Call) -> torch.Tensor | Law:
    """What the judge compares with: the expected values, or the law a random op's must follow."""
    if op.kind != "random":
        return expected_values(op, call)
    names = [a.name for a in op.overload._schema.arguments[1:] if not a.kwarg_only]
    return law_of(op.name, {**dict(zip(names, call.args, strict=False)), **call.kwargs}, call.dtype)
