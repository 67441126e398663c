"""The dispatch explorer: an op's registry entry beside its live dispatch table, and its path.

Type an operator name (completion comes from native_functions.yaml, in the page: see
`course.ui.CompletingText`), press Enter, and pick a kind of tensor; the widget shows what the
registry *declares* for the op, what the dispatcher *has* registered in this process right now,
and, drawn as a diagram, the kernels a call really runs: the Python binding, then each dispatch
key from highest priority down to the kernel that computes.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import ipywidgets as widgets
import torch
from matplotlib.figure import Figure

from course import emps
from course.dispatch.registry import RegistryEntry, backend_kernel, lookup, op_names
from course.dispatch.tables import (
    RegisteredKernel,
    Step,
    call_path,
    kernel_rows,
    registered_kernels,
)
from course.errors import CourseError, require_choice
from course.figures import describe
from course.ui import CompletingText, Drawing, Panel

# The kinds of tensor a learner can send the call to (each built fresh, 2x3 float32).
SAMPLES: dict[str, Callable[[], torch.Tensor]] = {
    "CPU tensor": lambda: torch.zeros(2, 3),
    "CPU tensor, requires_grad": lambda: torch.zeros(2, 3, requires_grad=True),
    "emps tensor (emulated MPS)": lambda: torch.zeros(2, 3, device=emps.DEVICE),
    "meta tensor (shapes only)": lambda: torch.zeros(2, 3, device="meta"),
}
_BOX = {"binding": "#e8eef8", "layer": "#f4f4f4", "final": "#d8f0d8"}
# What the op box's list offers while nothing is typed: the story's two ops and their overloads.
STORY_PREFIX = "addc"


def sample_tensor(kind: str) -> torch.Tensor:
    """A fresh tensor of one of the SAMPLES kinds."""
    require_choice("tensor", kind, SAMPLES)
    return SAMPLES[kind]()


def binding_name(entry: RegistryEntry) -> str:
    """The Python name a learner calls, and whether Python source exists for it."""
    base = entry.base
    if "method" in entry.variants and hasattr(torch.Tensor, base):
        target, label = getattr(torch.Tensor, base), f"Tensor.{base}"
    elif hasattr(torch, base):
        target, label = getattr(torch, base), f"torch.{base}"
    else:
        return f"torch.ops.aten.{entry.name}"
    built_in = not hasattr(target, "__code__")  # C++ bindings have no Python code object
    return f"{label} ({'generated C++ binding' if built_in else 'Python function'})"


def final_note(entry: RegistryEntry, step: Step, tensor: torch.Tensor) -> str:
    """What the last step runs, in the registry's words (or the subclass's, for Python)."""
    if step.key == "Python":
        return f"{type(tensor).__name__}.__torch_dispatch__ (Python)"
    try:
        shared = f" (the {entry.structured_delegate} kernel)" if entry.structured_delegate else ""
        return f"registry: {backend_kernel(entry.name, step.key)}{shared}"
    except CourseError:  # a backend the registry does not name (a Python override, say)
        return f"{step.kernel.language} kernel in {step.kernel.file}"


def path_figure(entry: RegistryEntry, steps: list[Step], tensor: torch.Tensor) -> Figure:
    """Boxes from the Python binding down to the computing kernel, one per dispatch key."""
    labels = [
        (binding_name(entry), "Python binding: parses arguments, calls the dispatcher", "binding")
    ]
    for index, step in enumerate(steps):
        last = index == len(steps) - 1
        detail = final_note(entry, step, tensor) if last else step.role
        labels.append(
            (
                f"{step.key}  [{step.kernel.kind}, {step.kernel.file}]",
                detail,
                "final" if last else "layer",
            )
        )
    fig = Figure(figsize=(7.5, 0.85 * len(labels) + 0.3))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 1)
    ax.set_ylim(-len(labels) + 0.4, 0.6)
    ax.axis("off")
    for row, (title, detail, style) in enumerate(labels):
        y = -row
        ax.text(
            0.5,
            y + 0.1,
            title,
            ha="center",
            va="center",
            fontsize=10,
            weight="bold",
            bbox={"boxstyle": "round,pad=0.4", "fc": _BOX[style], "ec": "#555555"},
        )
        ax.text(0.5, y - 0.22, detail, ha="center", va="center", fontsize=10, color="#333333")
        if row:
            ax.annotate(
                "",
                xy=(0.5, y + 0.32),
                xytext=(0.5, y + 0.62),
                arrowprops={"arrowstyle": "->", "color": "#555555"},
            )
    path = ", then ".join(title for title, _detail, _style in labels)
    return describe(fig, f"The path of one call, top to bottom: {path}. {labels[-1][1]}")


# A column's blocks: a heading line and detail lines under it, wrapping at spaces (and, for a
# name longer than the column, anywhere), never a table whose rows cannot wrap.
_BLOCK = "<div style='padding:3px 0;border-bottom:1px solid #ddd'>{}</div>"
_COLUMN = "<div style='flex:1 1 300px;min-width:0;overflow-wrap:anywhere'><h4>{}</h4>{}</div>"


def stacked_html(blocks: list[tuple[str, ...]]) -> str:
    """Rows stacked as blocks, one line each: a bold heading, then its details.

    A table puts a row's cells side by side, so a row is as wide as all its cells together:
    the live table needed 943 px in a 414 px column. Stacked, a block is as wide as its
    longest line, and lines wrap at spaces."""
    if not blocks:
        return "<p><em>(none)</em></p>"
    return "".join(
        _BLOCK.format("<br>".join([f"<b>{html.escape(head)}</b>", *map(html.escape, rest)]))
        for head, *rest in blocks
    )


def entry_html(entry: RegistryEntry) -> str:
    """One registry entry: its schema as wrapping text (it is long), its other fields stacked."""
    schema = (
        "<pre style='white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0'>"
        f"{html.escape(entry.schema)}</pre>"
    )
    rows = [(row["field"], row["value"]) for row in entry.as_rows() if row["field"] != "func"]
    return schema + stacked_html(rows)


def kernel_blocks(kernels: list[RegisteredKernel]) -> list[tuple[str, ...]]:
    """One block per registered kernel: its key, then the file, then its language and state."""
    return [
        (row["key"], row["file"], f"{row['language']} kernel, {row['state']}")
        for row in kernel_rows(kernels)
    ]


def explorer_html(entry: RegistryEntry) -> str:
    """The registry entry (and its structured delegate) beside the live registered kernels.

    Two columns that wrap under each other when the notebook is narrow, each a stack of short
    lines: nothing overflows a 414 px column."""
    registry = entry_html(entry)
    if entry.structured_delegate:
        delegate = lookup(entry.structured_delegate)
        registry += f"<p>kernel shared with <code>{delegate.name}</code>:</p>"
        registry += entry_html(delegate)
    live = stacked_html(kernel_blocks(registered_kernels(entry.name)))
    return (
        "<div style='display:flex;gap:16px;flex-wrap:wrap;max-width:100%'>"
        + _COLUMN.format("Registry: native_functions.yaml", registry)
        + _COLUMN.format(f"Live: {html.escape(entry.qualified)} in this process", live)
        + "</div>"
    )


def draw_explorer(op: str, tensor: str) -> Drawing:
    """One explorer view: raises CourseError (shown in the widget) for unknown names."""
    entry = lookup(op)
    sample = sample_tensor(tensor)
    steps = call_path(entry.name, sample)
    return Drawing(figure=path_figure(entry, steps, sample), html=explorer_html(entry))


def dispatch_explorer(op: str = "addcmul_", tensor: str = "CPU tensor, requires_grad") -> Panel:
    """The widget: an op name (completed as it is typed, drawn on Enter) and a tensor kind."""
    require_choice("tensor", tensor, SAMPLES)  # before the dropdown, which would only say "invalid"
    controls = {
        "op": CompletingText(
            op,
            op_names(),
            description="op",
            placeholder="an aten op, e.g. addcmul_, then Enter",
            blank=STORY_PREFIX,
        ),
        "tensor": widgets.Dropdown(options=list(SAMPLES), value=tensor, description="tensor"),
    }
    return Panel(controls, draw_explorer, title="Dispatch explorer: from a Python call to a kernel")
