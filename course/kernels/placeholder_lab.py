"""Notebook 06: the Placeholder bug, read, run, fixed by the learner, designed away.

The emulated backend's kernels (course/emps/mps_kernels.py) are read with `inspect.getsource` at run
time, so what the learner sees is the code that runs. A learner's kernel is installed into a
*private* backend (the process-wide one is never touched), for both `addcmul` and `addcdiv`,
because on MPS one kernel (`addc_mul_div_out_mps`) serves both; fixing only one would still
freeze the encoder, since Adam's parameter update is an `addcdiv_`. The checkers themselves are
in `course.kernels.exercises`; the contract a learner's kernel must keep in `contract`.
"""

from __future__ import annotations

import difflib
import html
import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from course import emps
from course.emps.mps_kernels import same_bits
from course.errors import CourseError, require_choice
from course.layout.named import laid_out

if TYPE_CHECKING:  # the widget stack loads only when a panel is built (lesson 06 checks need none)
    from course.ui import Drawing, Panel

KERNELS: dict[str, Callable[[emps.KernelCall], None]] = {
    "gather_compute_scatter": emps.gather_compute_scatter,
    "write_through_placeholder": emps.write_through_placeholder,
    "output_placeholder": emps.output_placeholder,
}
BUGGY_PROFILE = emps.TORCH_2_2_1  # the story's profile: its Placeholder loses writes
FAMILIES = ("addcmul", "addcdiv")  # one MPS kernel, addc_mul_div_out_mps, serves both
CHECK_STEPS = 3  # plateau steps the checker trains: one already moves a healthy encoder


SOURCES: dict[str, object] = {
    "Placeholder": emps.Placeholder,
    "OutputPlaceholder": emps.OutputPlaceholder,
    **KERNELS,
}


def kernel_source(name: str) -> str:
    """The source of one emulated kernel or placeholder class, read from the running code."""
    if name not in SOURCES:
        raise CourseError(f"no kernel named {name!r}; choose one of: {', '.join(SOURCES)}")
    source = inspect.getsource(SOURCES[name])
    if not re.search(rf"^(class|def) {name}\b", source, re.M):
        raise CourseError(f"the source read for {name} does not define it: did course.emps change?")
    return source


def diff_html(left: str, right: str) -> str:
    """Two kernels' sources side by side; lines only on one side or changed are highlighted.

    Two fixed half-width columns whose long lines wrap: the diff always fits the notebook's
    width (about 950 px in JupyterLab), however long a line of code is.
    """
    a, b = kernel_source(left).splitlines(), kernel_source(right).splitlines()
    fills = {"delete": "#f4c7c3", "insert": "#d4edda", "replace": "#fff3cd", "equal": ""}
    rows = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            lhs = a[i1 + k] if i1 + k < i2 else ""
            rhs = b[j1 + k] if j1 + k < j2 else ""
            rows.append(_diff_row(lhs, rhs, fills[tag]))
    head = (
        f"<tr><th style='width:50%'>{html.escape(left)}</th>"
        f"<th style='width:50%'>{html.escape(right)}</th></tr>"
    )
    style = (
        "border-collapse:collapse;font-family:monospace;font-size:12px;"
        "table-layout:fixed;width:100%;max-width:100%"
    )
    return f"<table style='{style}'>{head}{''.join(rows)}</table>"


def _diff_row(lhs: str, rhs: str, fill: str) -> str:
    cell = (
        "padding:0 6px;white-space:pre-wrap;overflow-wrap:anywhere;vertical-align:top;"
        f"background:{fill or 'transparent'}"
    )
    return (
        f"<tr><td style='{cell}'>{html.escape(lhs)}</td>"
        f"<td style='{cell}'>{html.escape(rhs)}</td></tr>"
    )


def diff_view(
    left: str = "gather_compute_scatter", right: str = "write_through_placeholder"
) -> Panel:
    """A widget: pick two kernels (or the Placeholder) and see their sources diffed."""
    import ipywidgets as widgets

    from course.ui import Panel

    options = list(SOURCES)
    controls = {
        "left": widgets.Dropdown(options=options, value=left, description="left"),
        "right": widgets.Dropdown(options=options, value=right, description="right"),
    }
    return Panel(controls, _draw_diff, title="Two kernel patterns, side by side")


def _draw_diff(left: str, right: str) -> Drawing:
    if left == right:
        raise CourseError(f"both sides show {left}: pick two different kernels to compare")
    from course.ui import Drawing

    return Drawing(html=diff_html(left, right))


def private_backend(
    kernel: Callable[[emps.KernelCall], None], profile: str | emps.Profile = BUGGY_PROFILE
) -> emps.Backend:
    """A backend on the buggy profile with `kernel` installed for addcmul and addcdiv."""
    return emps.Backend(emps.get_profile(profile), overrides=dict.fromkeys(FAMILIES, kernel))


LAB_LAYOUTS = ("contiguous", "transposed", "step-sliced")


def layouts(
    shape: tuple[int, ...] = (4, 6), names: tuple[str, ...] = LAB_LAYOUTS, seed: int = 0
) -> dict[str, torch.Tensor]:
    """Outputs of one logical shape in each named layout (seeded values, private generator)."""
    values = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    return {name: laid_out(values, name) for name in names}


def to_emulated(tensor: torch.Tensor) -> torch.Tensor:
    """A copy of a CPU tensor on the emulated device with the same strides and storage offset."""
    return emulated_in_storage(tensor)[0]


def emulated_in_storage(tensor: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`to_emulated`'s copy and the whole emulated storage it lives in."""
    size = tensor.untyped_storage().nbytes() // tensor.element_size()
    storage = torch.zeros(size, dtype=tensor.dtype, device=emps.DEVICE)
    copy = storage.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())
    return copy.copy_(tensor), storage


def read_back(storage: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """What an emulated storage holds where `like` (a CPU tensor) has its elements.

    Read through the storage, not through the tensor object a kernel was handed: a kernel
    that swapped that object's memory (`output.data = temporary`) left the storage, which
    other views share, as it was."""
    memory = storage.inner
    return memory.as_strided(like.shape, like.stride(), like.storage_offset()).clone()


ADDC_FAMILIES: dict[str, Callable[..., torch.Tensor]] = {
    "addcmul": torch.addcmul,
    "addcdiv": torch.addcdiv,
}


def run_addc(
    kernel: Callable[[emps.KernelCall], None],
    output: torch.Tensor,
    family: str = "addcmul",
    value: float = 0.5,
    profile: str | emps.Profile = BUGGY_PROFILE,
) -> tuple[torch.Tensor, torch.Tensor, list[emps.KernelEvent]]:
    """`output.addcmul_` or `output.addcdiv_` on the emulated device with `kernel`.

    Returns (what the output's memory holds afterwards, torch's answer on the CPU, the kernel
    events). Inputs are seeded (a private generator); addcdiv divides by |t2| + 1."""
    require_choice("family", family, tuple(ADDC_FAMILIES))
    _require_experiment(kernel, output, value)
    gen = torch.Generator().manual_seed(1)
    t1 = torch.randn(output.shape, generator=gen, dtype=output.dtype)
    t2 = torch.randn(output.shape, generator=gen, dtype=output.dtype)
    if family == "addcdiv":
        t2 = t2.abs() + 1
    expected = ADDC_FAMILIES[family](output, t1, t2, value=value)
    target, storage = emulated_in_storage(output)
    method = getattr(target, f"{family}_")
    with emps.use_backend(private_backend(kernel, profile)), emps.record() as log:
        method(t1.to(emps.DEVICE), t2.to(emps.DEVICE), value=value)
    return read_back(storage, output), expected, log.events


MAX_OUTPUT = 1 << 16  # elements: an experiment on one output, not a benchmark


def _require_experiment(kernel: object, output: object, value: object) -> None:
    """A kernel, a CPU floating-point output of bounded size and a number, or a clear error."""
    if not callable(kernel):
        raise CourseError(f"kernel must be a kernel function, not {type(kernel).__name__}")
    if not isinstance(output, torch.Tensor):
        raise CourseError(f"output must be a tensor (in any layout), not {type(output).__name__}")
    if output.device.type != "cpu" or not output.is_floating_point() or output.dim() < 1:
        raise CourseError(
            "output must be a CPU floating-point tensor with at least 1 dim (it is copied to the "
            f"emulated device with its strides), not {output.dtype} on {output.device}, "
            f"shape {tuple(output.shape)}"
        )
    if output.numel() > MAX_OUTPUT:
        raise CourseError(f"output has {output.numel():,} elements; at most {MAX_OUTPUT:,}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CourseError(f"value must be a number, not {value!r}")


def run_addcmul(
    kernel: Callable[[emps.KernelCall], None],
    output: torch.Tensor,
    value: float = 0.5,
    profile: str | emps.Profile = BUGGY_PROFILE,
) -> tuple[torch.Tensor, torch.Tensor, list[emps.KernelEvent]]:
    """`output.addcmul_(t1, t2, value=value)` on the emulated device with `kernel`.

    Returns (what the output holds afterwards, torch's answer on the CPU, the kernel events):
    an experiment on one output, in whatever layout it is stored."""
    return run_addc(kernel, output, "addcmul", value, profile)


def lost_write_rows(
    kernel_names: tuple[str, ...] = tuple(KERNELS), profile: str | emps.Profile = BUGGY_PROFILE
) -> list[dict[str, object]]:
    """For each kernel and layout: did `addcmul_`'s result reach the output? (from the record)"""
    rows = []
    for name in kernel_names:
        for layout, output in layouts().items():
            result, expected, events = run_addcmul(KERNELS[name], output, profile=profile)
            rows.append(
                {
                    "kernel": name,
                    "output": layout,
                    "temporaries": events[-1].temporaries,
                    "write": "LOST" if events[-1].lost_write else "ok",
                    "matches torch": same_bits(result, expected),  # bit for bit
                }
            )
    return rows


# One representative call per kernel family (x is a second tensor of the output's shape).
FAMILY_CALLS: dict[str, Callable[[torch.Tensor, torch.Tensor], object]] = {
    "mul": lambda out, x: out.mul_(2.0),
    "lerp": lambda out, x: out.lerp_(x, 0.5),
    "addcmul": lambda out, x: out.addcmul_(x, x, value=0.5),
    "addcdiv": lambda out, x: out.addcdiv_(x, x.abs() + 1, value=0.5),
    "normal": lambda out, x: out.normal_(generator=_seeded()),
    "uniform": lambda out, x: out.uniform_(generator=_seeded()),
    "exponential": lambda out, x: out.exponential_(generator=_seeded()),
    "random": lambda out, x: out.random_(0, 10, generator=_seeded()),
    "bernoulli": lambda out, x: out.bernoulli_(0.5, generator=_seeded()),
}


def _seeded() -> torch.Generator:
    """A private generator: the random families never touch the learner's global RNG."""
    return torch.Generator().manual_seed(0)


def family_call(
    backend: emps.Backend, family: str, layout: str = "transposed", shape: tuple[int, ...] = (3, 4)
) -> tuple[torch.Tensor, list[emps.KernelEvent]]:
    """One family's representative call on an emulated output stored in `layout`.

    Returns the output's values afterwards and the recorded kernel events. Random families draw
    from a private generator: the learner's global random stream is left as it was.
    """
    return family_call_on(backend, family, laid_out(torch.zeros(shape), layout))


def family_call_on(
    backend: emps.Backend, family: str, output: torch.Tensor
) -> tuple[torch.Tensor, list[emps.KernelEvent]]:
    """`family_call` on an emulated copy of `output` (any strides, offset, values and
    floating dtype: the input takes the output's, as lerp_ needs one dtype for both).

    The values afterwards are read through the output's storage (see `read_back`)."""
    gen = torch.Generator().manual_seed(0)
    out, storage = emulated_in_storage(output)
    x = torch.randn(output.shape, generator=gen).to(output.dtype).to(emps.DEVICE)
    with emps.use_backend(backend), emps.record() as log:
        FAMILY_CALLS[family](out, x)
    return read_back(storage, output), log.events


def family_lost_writes(backend: emps.Backend, layout: str = "transposed") -> dict[str, bool]:
    """Whether each family's kernel loses its write to an output in `layout` on `backend`."""
    return {
        family: any(event.lost_write for event in family_call(backend, family, layout)[1])
        for family in FAMILY_CALLS
    }


def redesign_rows(profile: str | emps.Profile = BUGGY_PROFILE) -> list[dict[str, object]]:
    """Lost writes per family: the profile's Placeholder design vs the OutputPlaceholder one."""
    before = family_lost_writes(emps.Backend(emps.get_profile(profile)))
    after = family_lost_writes(emps.redesigned_backend(profile))
    return [
        {
            "family": f,
            "placeholder": "LOST" if before[f] else "ok",
            "output-placeholder": "LOST" if after[f] else "ok",
        }
        for f in FAMILY_CALLS
    ]
