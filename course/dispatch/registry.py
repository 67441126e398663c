"""The operator registry, read from the installed torch's own `native_functions.yaml`.

Every aten operator is declared once in `aten/src/ATen/native/native_functions.yaml`: its schema,
which C++ kernel each backend uses (`dispatch:`), and whether it is a thin wrapper around another
op's kernel (`structured_delegate:`). The code generator turns that file into the Python bindings
and dispatcher registrations, which is why `Tensor.addcmul_` has no Python source to read. The
wheel ships the file inside `torchgen`, so we read the one that built *this* torch, not a copy.

The file changes between releases, and the story's part of it did: in PyTorch 2.2.1 MPS had
out= kernels of its own for `addcmul`/`addcdiv` (`addcmul_out_mps`, MPSGraph code behind a
Placeholder, where the writes were lost); from 2.15 MPS shares the structured kernel CPU and CUDA
use. `mps_kernel_history` puts the story's row beside the installed one and says why they differ.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import torch
import yaml

from course.errors import CourseError

YAML_IN_TORCHGEN = Path("packaged", "ATen", "native", "native_functions.yaml")
# An entry without `dispatch:` or `structured_delegate:` is implicitly this (see the yaml's README).
IMPLICIT_DISPATCH = "CompositeImplicitAutograd"
# The story's torch, and the MPS rows its native_functions.yaml (tag v2.2.1) gave the two out=
# kernels that lost writes (aten/src/ATen/native/mps/operations/PointwiseOps.mm). The installed
# torch's rows are read live.
STORY_TORCH = "2.2.1"
STORY_MPS_KERNELS = {"addcmul.out": "addcmul_out_mps", "addcdiv.out": "addcdiv_out_mps"}


@dataclass(frozen=True)
class RegistryEntry:
    """One operator overload as native_functions.yaml declares it."""

    name: str  # "addcmul.out", "addcmul_" (the default overload has no suffix)
    schema: str  # the full `func:` line
    structured: bool  # this is the out= kernel a structured family shares
    structured_delegate: str | None  # the out= overload whose kernel this op reuses
    variants: tuple[str, ...]  # "function" (torch.addcmul) and/or "method" (t.addcmul_)
    tags: tuple[str, ...]
    dispatch: dict[str, str] = field(default_factory=dict)  # "CPU, CUDA, MTIA" -> "addcmul_out"

    @property
    def base(self) -> str:
        """The name without overload: "addcmul" for "addcmul.out"."""
        return self.name.split(".")[0]

    @property
    def qualified(self) -> str:
        """The name the dispatcher uses: "aten::addcmul.out"."""
        return f"aten::{self.name}"

    def backend_kernels(self) -> dict[str, str]:
        """The dispatch table with one row per backend key: {"CPU": "addcmul_out", ...}."""
        table: dict[str, str] = {}
        for keys, kernel in self.dispatch.items():
            for key in keys.split(","):
                table[key.strip()] = kernel
        return table

    def as_rows(self) -> list[dict[str, str]]:
        """Field/value rows for a table."""
        rows = [
            {"field": "func", "value": self.schema},
            {"field": "variants", "value": ", ".join(self.variants)},
            {"field": "tags", "value": ", ".join(self.tags) or "-"},
        ]
        if self.structured:
            rows.append({"field": "structured", "value": "True (the shared out= kernel)"})
        if self.structured_delegate:
            rows.append({"field": "structured_delegate", "value": self.structured_delegate})
        rows += [
            {"field": f"dispatch {keys}", "value": kernel} for keys, kernel in self.dispatch.items()
        ]
        return rows


def yaml_path() -> Path:
    """Where the installed torch keeps native_functions.yaml (inside its torchgen package)."""
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        raise CourseError(
            "torchgen is not installed next to torch, so the operator registry "
            "(native_functions.yaml) cannot be read; reinstall torch from its wheel"
        )
    for folder in spec.submodule_search_locations:
        path = Path(folder) / YAML_IN_TORCHGEN
        if path.is_file():
            return path
    raise CourseError(
        f"native_functions.yaml is not at torchgen/{YAML_IN_TORCHGEN.as_posix()} in "
        "this torch install; the wheel's layout changed, so the registry cannot be read"
    )


@functools.cache
def entries() -> dict[str, RegistryEntry]:
    """Every operator overload in the registry, by name (parsed once per process: ~0.6 s)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with yaml_path().open() as handle:
        raw = yaml.load(handle, Loader=loader)
    if not isinstance(raw, list) or not all(isinstance(e, dict) and "func" in e for e in raw):
        raise CourseError(
            "native_functions.yaml is no longer a list of `func:` entries; "
            "its format changed and course.dispatch.registry needs updating"
        )
    parsed = (_entry(e) for e in raw)
    return {entry.name: entry for entry in parsed}


def _entry(raw: dict) -> RegistryEntry:
    schema = str(raw["func"])
    return RegistryEntry(
        name=schema.split("(", 1)[0].strip(),
        schema=schema,
        structured=bool(raw.get("structured", False)),
        structured_delegate=raw.get("structured_delegate"),
        variants=_words(raw.get("variants", "function")),
        tags=_words(raw.get("tags")),
        dispatch={str(k): str(v) for k, v in (raw.get("dispatch") or {}).items()},
    )


def _words(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else str(value).split(",")
    return tuple(str(item).strip() for item in items if str(item).strip())


def op_names() -> list[str]:
    """All operator overload names, sorted (for completion in the explorer)."""
    return sorted(entries())


def normalise(name: str) -> str:
    """Accept "aten::addcmul_", "addcmul_.default", " addcmul_ " and return "addcmul_"."""
    if not isinstance(name, str) or not name.strip():
        raise CourseError(
            f"an operator name is a non-empty string such as 'addcmul_', not {name!r}"
        )
    text = name.strip().removeprefix("aten::").removeprefix("torch.ops.aten.")
    return text.removesuffix(".default")


def lookup(name: str) -> RegistryEntry:
    """The registry entry for an op name or overload; unknown names get a "did you mean"."""
    key = normalise(name)
    table = entries()
    if key in table:
        return table[key]
    overloads = sorted(n for n in table if n.split(".")[0] == key)
    if overloads:
        raise CourseError(f"{key!r} has no default overload; pick one of: {', '.join(overloads)}")
    raise CourseError(f"no operator {key!r} in native_functions.yaml. {did_you_mean(key, table)}")


def did_you_mean(name: str, known, listing: str = "course.dispatch.registry.op_names()") -> str:
    """A "did you mean ...?" sentence from the closest known names (or where to find them all)."""
    close = difflib.get_close_matches(name, list(known), n=4, cutoff=0.6)
    if not close:
        return f"No close match; {listing} lists every operator."
    return "Did you mean: " + ", ".join(close) + "?"


def kernel_entry(name: str) -> RegistryEntry:
    """The entry whose `dispatch:` table serves the structured backends (CPU, CUDA, MPS, XPU,
    MTIA): the structured delegate, if there is one."""
    entry = lookup(name)
    return lookup(entry.structured_delegate) if entry.structured_delegate else entry


def backend_kernel(name: str, backend: str) -> str:
    """The C++ kernel function the registry names for `backend` ("CPU" -> "addcmul_out").

    A structured delegate may still have `dispatch:` rows of its own, for backends its structured
    kernel does not serve (sparse, mkldnn, nested tensors): torchgen registers those, so a row
    of the op's own wins over its delegate's."""
    own = lookup(name).backend_kernels()
    if backend in own:
        return own[backend]
    source = kernel_entry(name)
    table = source.backend_kernels()
    if backend in table:
        return table[backend]
    if not table:
        return f"{IMPLICIT_DISPATCH}: {source.base} (one kernel for every backend)"
    composite = [k for k in table if k.startswith("Composite")]
    if composite:
        return f"{composite[0]}: {table[composite[0]]}"
    raise CourseError(
        f"{source.name} has no {backend!r} kernel in the registry; it has: {', '.join(table)}"
    )


def structured_family(name: str) -> list[str]:
    """Every op served by the same out= kernel as `name`: ["addcmul", "addcmul.out", "addcmul_"]."""
    out = kernel_entry(name)
    if not out.structured:
        raise CourseError(
            f"{out.name} is not a structured kernel (no `structured: True`), "
            "so it shares no out= kernel"
        )
    family = [e.name for e in entries().values() if e.structured_delegate == out.name]
    return sorted(family + [out.name])


@dataclass(frozen=True)
class MpsKernelHistory:
    """The MPS kernel of one of the story's out= ops in PyTorch 2.2.1 and in the installed torch."""

    op: str  # the out= overload: "addcmul.out"
    then: str  # 2.2.1's MPS kernel: "addcmul_out_mps"
    now: str  # the installed torch's MPS kernel
    shared_with: tuple[str, ...]  # the other backends whose row names `now` ("CPU", "CUDA", ...)
    torch_version: str

    @property
    def own_kernel(self) -> bool:
        """Whether MPS still has a kernel of its own (no other backend runs it)."""
        return not self.shared_with

    def why(self) -> str:
        """Why the installed row reads as it does, next to 2.2.1's: which kernel, never how it
        lost writes (that is notebook 06's question, and this prints in notebook 05)."""
        if self.own_kernel:
            return (
                f"MPS still has its own {self.op} kernel, {self.now} in PointwiseOps.mm. What "
                f"changed inside it between {STORY_TORCH} and 2.4 is notebook 06's question."
            )
        return (
            f"MPS now shares {self.now} with {', '.join(self.shared_with)}: that structured kernel "
            "builds a TensorIterator (every operand's sizes and strides, the output's too) and "
            "calls the device's stub, for which MPS registers a Metal kernel (PyTorch moved "
            "addcmul/addcdiv from MPSGraph to Metal, pytorch/pytorch#196924). The MPS-only "
            f"{self.then} of the story is gone (notebook 06 opens it)."
        )

    def __str__(self) -> str:
        """Both rows and the reason, in lines under 100 characters (a notebook cell's width)."""
        owner = "MPS's own" if self.own_kernel else f"shared with {', '.join(self.shared_with)}"
        return "\n".join(
            [
                f"{self.op} on MPS",
                f"  torch {STORY_TORCH} (the story): {self.then}, MPS's own",
                f"  torch {self.torch_version} (yours): {self.now}, {owner}",
                textwrap.fill(f"why: {self.why()}", width=96, subsequent_indent="     "),
            ]
        )


def mps_kernel_history(name: str) -> MpsKernelHistory:
    """Which MPS kernel `name` (addcmul_, addcdiv, addcmul.out ...) ran in 2.2.1 and runs now."""
    out = kernel_entry(name)
    if out.name not in STORY_MPS_KERNELS:
        raise CourseError(
            f"{name!r} runs {out.name}'s kernel; the story's MPS kernels are those of "
            f"{' and '.join(STORY_MPS_KERNELS)} (try 'addcmul_' or 'addcdiv_')"
        )
    table = out.backend_kernels()
    now = backend_kernel(out.name, "MPS")
    shared = tuple(key for key, kernel in table.items() if kernel == now and key != "MPS")
    return MpsKernelHistory(
        out.name, STORY_MPS_KERNELS[out.name], now, shared, torch.__version__.split("+")[0]
    )
