"""No false bugs: every in-place and out= op on the emulated device gives the CPU's bits.

The ops come from torch's own registry (every public aten in-place or out= overload that is
tagged pointwise, or is a seeded random op), never from a hand-written list, so a new torch's
ops are covered too. Each is called three ways with a non-contiguous (transposed) output:
in place, with a separate `out=`, and with `out=` aliasing its first input
(`torch.add(c, b, out=c)`). On every profile, only the historical broken kernel families may
lose their write; everything else must match the CPU bit for bit.

The CPU reference is the op on contiguous copies of every buffer: that is what the emulated
graph runs on, on every profile (the Placeholder gathers them before macOS 15; on macOS 15 the
emulator computes through contiguous scratch copies itself, because the host's CPU kernels are
not all right on strided outputs, `gelu.out`, and transcendental ones round differently on
strided memory). Random ops are seeded identically, so they are compared bitwise as well,
against the CPU on the same strided layout: a random kernel's draws land in the order it walks
its output, and the emulated graph draws in the CPU's order.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import pytest
import torch

from course import emps
from course.emps.mps_kernels import (
    gather_compute_scatter,
    output_placeholder,
    same_bits,
    write_through_placeholder,
)

SHAPE = (6, 10)
FLOAT_DOMAINS = ((0.1, 0.9), (1.1, 3.0), (-0.9, 0.9))
MODES = ("inplace", "out", "alias")
BROKEN_PROFILES = ("2.2.1-macos14", "2.4-macos14")


def _written(overload) -> list:
    return [a for a in overload._schema.arguments if a.alias_info and a.alias_info.is_write]


def _audited(overload) -> bool:
    """Pointwise (itself or its functional twin), or seeded random with a generator."""
    base = overload._schema.name.split("::")[1].rstrip("_")
    twin = getattr(getattr(torch.ops.aten, base, None), "default", None)
    pointwise = torch.Tag.pointwise in overload.tags or (
        twin is not None and torch.Tag.pointwise in twin.tags
    )
    seeded = torch.Tag.nondeterministic_seeded in overload.tags
    return pointwise or (seeded and any(a.name == "generator" for a in overload._schema.arguments))


def discover() -> list[tuple[str, torch._ops.OpOverload]]:
    """(mode, overload) for every public in-place and out= overload worth auditing."""
    found = []
    for qualified in sorted(torch._C._dispatch_get_all_op_names()):
        namespace, _, rest = qualified.partition("::")
        base, _, overload_name = rest.partition(".")
        if namespace != "aten" or base.startswith("_"):
            continue
        overload = getattr(getattr(torch.ops.aten, base, None), overload_name or "default", None)
        written = _written(overload) if overload is not None else []
        if len(written) != 1 or not _audited(overload):
            continue
        if base.endswith("_") and written[0].name == "self" and not written[0].kwarg_only:
            found.append(("inplace", overload))
        elif written[0].kwarg_only and written[0].name == "out":
            found += [("out", overload), ("alias", overload)]
    return found


@dataclass(eq=False)
class Case:
    mode: str
    overload: torch._ops.OpOverload
    args: list
    kwargs: dict
    out_dtype: torch.dtype

    @property
    def random(self) -> bool:
        return torch.Tag.nondeterministic_seeded in self.overload.tags

    @property
    def family(self) -> str:
        return self.overload._schema.name.split("::")[1].rstrip("_")

    def __str__(self) -> str:
        return f"{self.mode}:{self.overload}"


def _values(dtype: torch.dtype, domain, gen: torch.Generator) -> torch.Tensor:
    low, high = domain
    if dtype.is_floating_point:
        return (torch.rand(SHAPE, generator=gen, dtype=torch.float64) * (high - low) + low).to(
            dtype
        )
    if dtype == torch.bool:
        return torch.rand(SHAPE, generator=gen) > 0.5
    return torch.randint(1, 16, SHAPE, generator=gen, dtype=dtype)


def _argument(argument, dtype, domain, gen, scalars):
    kind = str(argument.type).replace("number", "Scalar")
    if argument.name == "generator":
        return None
    if argument.name == "mask" and kind == "Tensor":
        return _values(torch.bool, domain, gen)
    if kind in ("Tensor", "Optional[Tensor]"):
        return _values(dtype, domain, gen)
    if argument.has_default_value() and argument.default_value is not None:
        return argument.default_value
    if kind in ("Scalar", "float", "Optional[Scalar]", "Optional[float]"):
        return next(scalars)
    if kind == "int":
        return 3
    if kind == "bool":
        return False
    if kind.startswith("Optional["):
        return None
    raise TypeError(f"cannot build {argument.name}: {kind}")


def _build(mode: str, overload, dtype: torch.dtype, domain) -> Case:
    gen = torch.Generator().manual_seed(0)
    scalars = itertools.cycle((0.3, 0.7, 0.5) if dtype.is_floating_point else (3, 5, 7))
    args, kwargs = [], {}
    for argument in overload._schema.arguments:
        if argument.kwarg_only and argument.name == "out":
            continue
        value = _argument(argument, dtype, domain, gen, scalars)
        (kwargs.__setitem__(argument.name, value) if argument.kwarg_only else args.append(value))
    out_dtype = args[0].dtype if mode == "inplace" else _out_dtype(overload, args, kwargs, dtype)
    if mode == "alias" and not (
        args and isinstance(args[0], torch.Tensor) and args[0].dtype == out_dtype
    ):
        raise TypeError("no tensor input the output can alias")
    return Case(mode, overload, args, kwargs, out_dtype)


def _out_dtype(overload, args, kwargs, dtype) -> torch.dtype:
    probe = torch.empty(0, dtype=dtype)
    overload(*args, **kwargs, out=probe)
    if tuple(probe.shape) != SHAPE:
        raise TypeError("output shape is not the input's")
    return probe.dtype


def _layout(values: torch.Tensor, device: str, contiguous: bool) -> torch.Tensor:
    if contiguous:
        return values.to(device, copy=True)  # never the case's own tensor: the op writes it
    out = torch.empty(SHAPE[::-1], dtype=values.dtype, device=device).t()
    return out.copy_(values.to(device))


def run(case: Case, device: str, gathered: bool = False, separate: bool = False) -> torch.Tensor:
    """The written tensor after one call with a transposed output.

    `gathered`: instead, what a gathering kernel computes: contiguous copies of everything,
    so an aliased output is a buffer of its own. `separate`: layouts as they are, but an
    aliased output is a transposed buffer of its own (what the emulated random graphs read).
    """

    def move(value):
        return value.to(device) if isinstance(value, torch.Tensor) else value

    args, kwargs = [move(a) for a in case.args], {k: move(v) for k, v in case.kwargs.items()}
    if case.mode == "out":
        poison = torch.full(SHAPE, -7, dtype=case.out_dtype)
        target = kwargs["out"] = _layout(poison, device, gathered)
    elif case.mode == "alias" and gathered:
        target = kwargs["out"] = case.args[0].clone()
    elif case.mode == "alias" and separate:
        args[0] = _layout(case.args[0], device, False)
        target = kwargs["out"] = _layout(case.args[0], device, False)
    else:
        target = args[0] = _layout(case.args[0], device, gathered)
        if case.mode == "alias":
            kwargs["out"] = target
    torch.default_generator.manual_seed(0)  # the CPU generator the emulated kernels draw from
    case.overload(*args, **kwargs)
    return target.cpu()


def _finite_case(mode: str, overload) -> Case | None:
    for dtype, domain in [*((torch.float32, d) for d in FLOAT_DOMAINS), (torch.int64, (1, 16))]:
        try:
            case = _build(mode, overload, dtype, domain)
            result = run(case, "cpu")
        except (TypeError, RuntimeError, ValueError):
            continue
        if not result.is_floating_point() or torch.isfinite(result).all():
            return case
    return None


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    built = [_finite_case(mode, overload) for mode, overload in discover()]
    return [case for case in built if case is not None]


def mismatches(cases: list[Case], backend: emps.Backend) -> set[str]:
    """The cases whose emulated result differs from the CPU on contiguous buffers."""
    with emps.use_backend(backend):
        return {
            str(case) for case in cases if not same_bits(run(case, emps.DEVICE), reference(case))
        }


@functools.cache
def reference(case: Case) -> torch.Tensor:
    """A random op's reference is the CPU on the very layout: it draws in the order it walks
    its output (Note [Random draws land where the CPU puts them] in course.emps.device)."""
    return run(case, "cpu", gathered=not case.random, separate=case.random)


def test_discovery_covers_the_ops_that_matter(cases):
    names = {str(case) for case in cases}
    for expected in (
        "inplace:aten.addcmul_.default",
        "inplace:aten.normal_.default",
        "out:aten.maximum.out",
        "alias:aten.maximum.out",
        "alias:aten.add.out",
        "alias:aten.mul.out",
        "alias:aten.ldexp.out",
    ):
        assert expected in names
    assert sum(case.mode == "inplace" for case in cases) >= 100
    assert sum(case.mode == "alias" for case in cases) >= 100


@pytest.mark.parametrize("profile", list(emps.PROFILES))
def test_only_historical_families_differ_from_the_cpu(cases, profile):
    chosen = emps.get_profile(profile)
    expected = {str(case) for case in cases if case.family in chosen.broken}
    assert mismatches(cases, emps.Backend(chosen)) == expected
    assert bool(expected) == (profile in BROKEN_PROFILES)


def test_redesigned_backend_matches_the_cpu_everywhere(cases):
    assert not mismatches(cases, emps.redesigned_backend())


def test_aliased_out_examples_from_the_issue():
    with emps.use_profile("fixed-macos14"):
        c = torch.zeros(4, 4, device=emps.DEVICE).t()
        b = torch.ones(4, 4, device=emps.DEVICE)
        torch.add(c, b, out=c)
        torch.mul(c, 2, out=c)
        torch.maximum(c, b * 3, out=c)
        assert c.cpu().eq(3).all()


@pytest.mark.parametrize("profile", list(emps.PROFILES))
def test_recorder_sees_an_aliased_lost_write(profile):
    chosen = emps.get_profile(profile)
    c = torch.zeros(4, 4, device=emps.DEVICE).t()
    b = torch.ones(4, 4, device=emps.DEVICE)
    with emps.use_profile(chosen), emps.record() as log:
        torch.addcmul(c, b, b, out=c)
    lost = "addcmul" in chosen.broken
    assert [e.lost_write for e in log.events] == [lost]
    assert bool(c.cpu().eq(0).all()) == lost


def test_contiguous_results_bitwise_equal_cpu():
    torch.manual_seed(0)
    a, b, c = (torch.randn(16, 16) for _ in range(3))
    ref = a.clone().addcmul_(b, c, value=0.3).addcdiv_(b, c.abs() + 1, value=-0.1).lerp_(c, 0.2)
    dev = a.clone().to("emps").addcmul_(b.to("emps"), c.to("emps"), value=0.3)
    dev = dev.addcdiv_(b.to("emps"), c.abs().to("emps") + 1, value=-0.1).lerp_(c.to("emps"), 0.2)
    assert torch.equal(dev.cpu(), ref)


def test_a_second_gather_of_an_unchanged_tensor_is_a_fresh_equal_copy():
    source = torch.arange(12.0).reshape(3, 4).t()
    call = emps.KernelCall("aten::x_", "x", source, [source], graph=lambda out, ins: out)
    first, second = call.placeholder(source), call.placeholder(source)
    assert second.buffer.data_ptr() != first.buffer.data_ptr()
    assert torch.equal(second.buffer, first.buffer) and second.buffer.is_contiguous()
    assert call.temporaries == 2, "each gather is still a temporary of the modelled kernel"
    first.buffer.add_(1)  # a changed copy must not be reused
    assert torch.equal(call.placeholder(source).buffer, source.contiguous())
    source.mul_(2)  # nor a copy of a tensor that changed since
    assert torch.equal(call.placeholder(source).buffer, source.contiguous())


@pytest.mark.parametrize(
    "kernel, written",
    [
        (gather_compute_scatter, True),
        (write_through_placeholder, False),
        (output_placeholder, True),
    ],
)
@pytest.mark.parametrize("in_place", [True, False])
def test_an_in_place_graph_reads_its_gathered_output_without_another_copy(
    kernel, written, in_place
):
    """x.mul_(2) on a transposed x: the graph's self input is a gather of the values its output
    buffer already holds, so it reads that buffer (the emulator saves a strided copy and a
    clone); the modelled kernel still makes, and counts, both temporaries. An out= op whose
    input is its output gets a copy of its own, whatever the op does with aliased memory."""
    source = torch.arange(12.0).reshape(3, 4).t()
    before, reads_output = source.clone(), []

    def graph(out, ins):
        reads_output.append(ins[0] is out)
        assert torch.equal(ins[0], before)
        return torch.mul(ins[0], 2, out=out)

    call = emps.KernelCall("aten::mul_", "mul", source, [source], graph=graph, in_place=in_place)
    kernel(call)
    assert reads_output == [in_place] and call.temporaries == 2
    assert torch.equal(source, before * 2 if written else before)


@pytest.mark.parametrize("profile", list(emps.PROFILES))
def test_no_profile_shows_the_hosts_strided_gelu_out_bug(profile):
    """The host CPU's gelu.out writes a transposed `out` as if it were contiguous (oneDNN, torch
    2.13). No emulated profile may show that: before macOS 15 the Placeholder gathers the
    output, and the real macOS 15 device writes strided arrays right."""
    x = torch.linspace(-3, 3, 48).reshape(6, 8)
    expected = torch.nn.functional.gelu(x)
    with emps.use_profile(profile):
        out = torch.zeros(8, 6, device=emps.DEVICE).t()
        torch._C._nn.gelu(x.to(emps.DEVICE), out=out)
    assert same_bits(out.cpu(), expected)
