"""Notebook 06: the Placeholder bug, read, diffed, fixed by the learner, designed away.

The emulated backend's kernels (course/emps/kernels.py) are read with `inspect.getsource` at run
time, so what the learner sees is the code that runs. The exercise "06.fix_addcmul" installs the
learner's kernel into a *private* backend (the process-wide one is never touched) and reruns the
story's plateau experiment: the fix counts only if the encoder trains again. The learner's
kernel is installed for both `addcmul` and `addcdiv`, because on MPS one kernel
(`addc_mul_div_out_mps`) serves both; fixing only one would still freeze the encoder, since
Adam's parameter update is an `addcdiv_`.
"""

from __future__ import annotations

import difflib
import html
import inspect
from collections.abc import Callable

import ipywidgets as widgets
import torch

from course import emps
from course.errors import CourseError
from course.kernels.cpp.kernels import LAYOUTS, make_output
from course.ui import Drawing, Panel, html_table

KERNELS: dict[str, Callable[[emps.KernelCall], None]] = {
    "gather_compute_scatter": emps.gather_compute_scatter,
    "write_through_placeholder": emps.write_through_placeholder,
    "output_placeholder": emps.output_placeholder,
}
BUGGY_PROFILE = "2.2.1-macos14"
FAMILIES = ("addcmul", "addcdiv")  # one MPS kernel, addc_mul_div_out_mps, serves both
CHECK_STEPS = 10  # plateau steps the checker trains: enough to see the encoder move
STATUS_COLOURS = {"LOST": "#f4c7c3", "ok": "#d4edda"}


def kernel_source(name: str) -> str:
    """The source of one emulated kernel (or "Placeholder"), read from the running code."""
    if name == "Placeholder":
        return (
            inspect.getsource(emps.Placeholder) + "\n\n" + inspect.getsource(emps.OutputPlaceholder)
        )
    if name not in KERNELS:
        raise CourseError(
            f"no kernel named {name!r}; choose one of: Placeholder, {', '.join(KERNELS)}"
        )
    source = inspect.getsource(KERNELS[name])
    if f"def {name}(" not in source:
        raise CourseError(f"the source read for {name} does not define it: did course.emps change?")
    return source


def diff_html(left: str, right: str) -> str:
    """Two kernels' sources side by side; lines only on one side or changed are highlighted."""
    a, b = kernel_source(left).splitlines(), kernel_source(right).splitlines()
    fills = {"delete": "#f4c7c3", "insert": "#d4edda", "replace": "#fff3cd", "equal": ""}
    rows = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            lhs = a[i1 + k] if i1 + k < i2 else ""
            rhs = b[j1 + k] if j1 + k < j2 else ""
            rows.append(_diff_row(lhs, rhs, fills[tag]))
    head = f"<tr><th>{html.escape(left)}</th><th>{html.escape(right)}</th></tr>"
    style = "border-collapse:collapse;font-family:monospace;font-size:12px"
    return f"<table style='{style}'>{head}{''.join(rows)}</table>"


def _diff_row(lhs: str, rhs: str, fill: str) -> str:
    cell = f"padding:0 8px;white-space:pre;vertical-align:top;background:{fill or 'transparent'}"
    return (
        f"<tr><td style='{cell}'>{html.escape(lhs)}</td>"
        f"<td style='{cell}'>{html.escape(rhs)}</td></tr>"
    )


def diff_view(
    left: str = "gather_compute_scatter", right: str = "write_through_placeholder"
) -> Panel:
    """A widget: pick two kernels (or the Placeholder) and see their sources diffed."""
    options = ["Placeholder", *KERNELS]
    controls = {
        "left": widgets.Dropdown(options=options, value=left, description="left"),
        "right": widgets.Dropdown(options=options, value=right, description="right"),
    }
    return Panel(controls, _draw_diff, title="Two kernel patterns, side by side")


def _draw_diff(left: str, right: str) -> Drawing:
    if left == right:
        raise CourseError(f"both sides show {left}: pick two different kernels to compare")
    return Drawing(html=diff_html(left, right))


def private_backend(
    kernel: Callable[[emps.KernelCall], None], profile: str = BUGGY_PROFILE
) -> emps.Backend:
    """A backend on the buggy profile with `kernel` installed for addcmul and addcdiv."""
    return emps.Backend(emps.get_profile(profile), overrides=dict.fromkeys(FAMILIES, kernel))


def layouts(shape: tuple[int, int] = (4, 6)) -> dict[str, torch.Tensor]:
    """Outputs of one logical shape in each memory layout (seeded values)."""
    gen = torch.Generator().manual_seed(0)
    return {layout: make_output(shape, layout, gen) for layout in LAYOUTS}


def to_emulated(tensor: torch.Tensor) -> torch.Tensor:
    """A copy of a CPU tensor on the emulated device with the same strides (even non-dense ones)."""
    copy = torch.empty_strided(tensor.shape, tensor.stride(), device=emps.DEVICE)
    return copy.copy_(tensor)


def run_addcmul(
    kernel: Callable[[emps.KernelCall], None], output: torch.Tensor, value: float = 0.5
) -> tuple[torch.Tensor, torch.Tensor, list[emps.KernelEvent]]:
    """`output.addcmul_` on the emulated device with `kernel`; (result, torch's answer, events)."""
    gen = torch.Generator().manual_seed(1)
    t1, t2 = torch.randn(output.shape, generator=gen), torch.randn(output.shape, generator=gen)
    expected = torch.addcmul(output, t1, t2, value=value)
    target = to_emulated(output)
    with emps.use_backend(private_backend(kernel)), emps.record() as log:
        target.addcmul_(t1.to(emps.DEVICE), t2.to(emps.DEVICE), value=value)
    return target.inner.clone(), expected, log.events


def lost_write_rows(kernel_names: tuple[str, ...] = tuple(KERNELS)) -> list[dict[str, object]]:
    """For each kernel and layout: did `addcmul_`'s result reach the output? (from the record)"""
    rows = []
    for name in kernel_names:
        for layout, output in layouts().items():
            result, expected, events = run_addcmul(KERNELS[name], output)
            rows.append(
                {
                    "kernel": name,
                    "output": layout,
                    "temporaries": events[-1].temporaries,
                    "write": "LOST" if events[-1].lost_write else "ok",
                    "matches torch": bool(torch.allclose(result, expected)),
                }
            )
    return rows


def lost_write_table() -> str:
    """`lost_write_rows` as an HTML table, lost writes in red."""
    return html_table(lost_write_rows(), STATUS_COLOURS)


# The redesign: one representative call per kernel family, on a transposed output.
FAMILY_CALLS: dict[str, Callable[[torch.Tensor, torch.Tensor], object]] = {
    "mul": lambda out, x: out.mul_(2.0),
    "lerp": lambda out, x: out.lerp_(x, 0.5),
    "addcmul": lambda out, x: out.addcmul_(x, x, value=0.5),
    "addcdiv": lambda out, x: out.addcdiv_(x, x.abs() + 1, value=0.5),
    "normal": lambda out, x: out.normal_(),
    "uniform": lambda out, x: out.uniform_(),
    "exponential": lambda out, x: out.exponential_(),
    "random": lambda out, x: out.random_(0, 10),
    "bernoulli": lambda out, x: out.bernoulli_(0.5),
}


def family_lost_writes(backend: emps.Backend) -> dict[str, bool]:
    """Whether each family's kernel loses its write to a transposed output on `backend`."""
    torch.manual_seed(0)
    lost = {}
    for family, call in FAMILY_CALLS.items():
        out = torch.zeros(3, 4).to(emps.DEVICE).t()
        x = torch.randn(4, 3).to(emps.DEVICE)
        with emps.use_backend(backend), emps.record() as log:
            call(out, x)
        lost[family] = any(event.lost_write for event in log.events)
    return lost


def redesign_rows(profile: str = BUGGY_PROFILE) -> list[dict[str, object]]:
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
