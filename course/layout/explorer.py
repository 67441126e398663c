"""Strides you can see: the stride explorer and notebook 04's layout tables.

The explorer draws a tensor's flat storage as a strip and its logical view as a grid, for a base
shape and a chain of view operations typed as text ("T; [:, ::2]; unsqueeze(0)", parsed by
`course.layout.opchain`, never eval'd). The layout comes from the pure calculator
`course.layout.calculator`; the same chain also runs on a real tensor, and the widget refuses
to draw if the two ever disagree.
The base tensor is `torch.arange(n)`, so at first every cell's number *is* its storage address.
"""

from __future__ import annotations

import functools
import html
import itertools
import math
import textwrap

import ipywidgets as widgets
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from course.errors import CourseError, require_choice
from course.exercises import TEXT_WIDTH, wrapped
from course.figures import BLUE, GREY, INK, MIN_FONT_PT, ORANGE, describe
from course.layout.calculator import (
    Layout,
    apply_chain,
    apply_torch,
    explain_contiguity,
    view_verdict,
)
from course.layout.opchain import SYNTAX, parse_chain, parse_ints
from course.markup import html_table, message_html
from course.model.encoder_layout import layout_row
from course.tables import text_table
from course.ui import Drawing, Panel

MAX_CELLS = 64  # the largest storage or view the explorer draws legibly
STRIP_WIDTH = 16  # storage cells per row of the strip: flat memory, wrapped like text
CELL_IN = 0.36  # one cell, in inches
CHARS = 4  # monospace characters per cell: the numbers' font size follows from it
MONO = "DejaVu Sans Mono"  # ships with matplotlib
FONT_PT = CELL_IN * 72 / (CHARS * 0.602)  # DejaVu Sans Mono advances 0.602 em per character
# past the end of storage, unused by the view, in the view, the selected element (outlined too)
PAST_END, UNUSED, IN_VIEW, SELECTED = range(4)
COLOURS = ListedColormap(["#ffffff", GREY, BLUE, ORANGE])

PRESETS: dict[str, tuple[str, str]] = {
    "the encoder: decoder.weight.T": ("4, 6", "T"),
    "transpose then clone()": ("4, 6", "T; clone()"),
    "transpose then contiguous() (copies)": ("4, 6", "T; contiguous()"),
    "rows 1-2: an offset, still contiguous": ("4, 6", "[1:3]"),
    "every other column": ("4, 6", "[:, ::2]"),
    "narrow a column block": ("4, 6", "narrow(1, 2, 3)"),
    "expand: stride 0": ("6", "unsqueeze(0); expand(4, 6)"),
    "permute a 3-d tensor": ("2, 3, 4", "permute(2, 0, 1)"),
    "reshape after transpose copies": ("4, 6", "T; reshape(24)"),
    "as_strided: sliding windows": ("12", "as_strided((5, 4), (2, 1), 0)"),
}
CUSTOM = "(type your own)"


def trace_chain(shape_text: str, ops_text: str) -> tuple[list[Layout], torch.Tensor]:
    """The layout after every step (calculator) and the final real tensor (torch)."""
    shape = parse_ints(shape_text, "shape")
    if not shape or math.prod(shape) > MAX_CELLS or min(shape) < 1:
        raise CourseError(
            f"shape {shape_text!r}: give 1 to 4 sizes >= 1 with at most "
            f"{MAX_CELLS} elements in all, like 4, 6"
        )
    ops = parse_chain(ops_text)
    layouts = apply_chain(Layout.contiguous(shape), ops)
    tensor = torch.arange(math.prod(shape)).view(shape)
    for op in ops:
        tensor = apply_torch(tensor, op)
    real = Layout.of(tensor)
    mine = layouts[-1]
    if (real.shape, real.stride, real.offset) != (mine.shape, mine.stride, mine.offset):
        raise CourseError(f"the calculator predicted {mine} but torch made {real}: please report")
    if mine.numel > MAX_CELLS:
        raise CourseError(
            f"the view has {mine.numel} elements; the explorer draws at most "
            f"{MAX_CELLS}: use smaller sizes"
        )
    return layouts, tensor


def storage_values(tensor: torch.Tensor) -> list[int]:
    """The whole flat storage under a tensor, as a list (for the strip)."""
    size = Layout.of(tensor).storage_size
    return torch.as_strided(tensor, (size,), (1,), 0).tolist()


@functools.cache
def _line_spacing() -> float:
    """Matplotlib's `linespacing` that makes one line of our font exactly one cell tall.

    How matplotlib turns `linespacing` into a distance between lines has changed between
    releases (glyph metrics, then font tables), but it is proportional in all of them: measure
    the pitch at linespacing 1 once, and scale.
    """
    fig = Figure(dpi=72)  # at 72 dpi one pixel is one point
    renderer = FigureCanvasAgg(fig).get_renderer()
    text = fig.text(0, 0, "0\n0", family=MONO, fontsize=FONT_PT, linespacing=1.0)
    two = text.get_window_extent(renderer).height
    text.set_text("0\n0\n0")
    pitch = text.get_window_extent(renderer).height - two
    return CELL_IN * 72 / pitch


def _cells(
    fig: Figure,
    box: tuple[float, float],
    codes: list[list[int]],
    labels: list[list[str]],
    row_names: list[str],
    title: str,
) -> None:
    """Coloured square cells with a number in each, placed at `box` (left, bottom inches).

    Why one monospace text for the whole grid instead of one text per cell: text layout
    dominates the redraw time. The axes is sized so that a cell is CHARS characters wide and
    one line tall, so the characters line up with the cells.
    """
    rows, cols = len(codes), len(codes[0])
    width, height = fig.get_size_inches()
    ax = fig.add_axes(
        (box[0] / width, box[1] / height, cols * CELL_IN / width, rows * CELL_IN / height)
    )
    ax.imshow(codes, cmap=COLOURS, vmin=0, vmax=3, aspect="auto", extent=(0, cols, rows, 0))
    style = dict(
        va="center", family=MONO, fontsize=FONT_PT, parse_math=False, linespacing=_line_spacing()
    )
    # every glyph costs render time, spaces too: trim what is not needed for alignment
    grid = "\n".join("".join(f"{t:^{CHARS}}" for t in row).rstrip() for row in labels)
    ax.text(0, rows / 2, grid, ha="left", **style)
    if row_names:
        ax.text(
            -0.15,
            rows / 2,
            "\n".join(row_names),
            ha="right",
            color="#555555",
            multialignment="right",
            **style,
        )
    for r, row in enumerate(codes):  # the selected element: outlined, not only orange
        for c, code in enumerate(row):
            if code == SELECTED:
                ax.add_patch(Rectangle((c, r), 1, 1, fill=False, ec=INK, lw=2.5))
    ax.set_title(title, fontsize=MIN_FONT_PT, loc="left")
    ax.set_axis_off()


def _view_grid(
    layout: Layout, storage: list[int], selected: tuple[int, ...]
) -> tuple[list[list[int]], list[list[str]], list[str]]:
    """The logical view's cells (codes, labels) and row names; a last dimension longer than
    STRIP_WIDTH wraps onto several rows, each named by the slice it holds (so the figure stays
    within a notebook cell)."""
    indices = list(itertools.product(*(range(s) for s in layout.shape)))
    cols = layout.shape[-1] if layout.shape else 1
    shown = min(cols, STRIP_WIDTH)
    chunks = math.ceil(cols / shown)
    rows = max(len(indices) // max(cols, 1), 1) * chunks
    codes = [[0] * shown for _ in range(rows)]
    labels = [[""] * shown for _ in range(rows)]
    names = []
    for k, index in enumerate(indices):
        line, column = divmod(k, cols)
        r, c = line * chunks + column // shown, column % shown
        codes[r][c] = SELECTED if index == selected else IN_VIEW
        labels[r][c] = str(storage[layout.storage_index(index)])
        if c == 0:
            prefix = "".join(f"{i}, " for i in index[:-1])
            end = min(column + shown, cols)
            names.append(f"[{prefix}{column}:{end}]" if chunks > 1 else f"[{prefix}:]")
    return codes, labels, names if chunks > 1 or len(layout.shape) > 2 else []


def draw_layout(layout: Layout, storage: list[int], selected: tuple[int, ...]) -> Figure:
    """Storage strip on top (used slots blue, the selected one orange and outlined), logical
    grid below."""
    used = {layout.storage_index(i) for i in itertools.product(*(range(s) for s in layout.shape))}
    chosen = layout.storage_index(selected)
    width = max(min(len(storage), STRIP_WIDTH), 1)
    strip_rows = max(math.ceil(len(storage) / width), 1)
    grid_codes, grid_labels, row_names = _view_grid(layout, storage, selected)
    grid_height = len(grid_codes) * CELL_IN + 0.55  # cells, then room for the title
    fig = Figure(
        figsize=(
            max(width, len(grid_codes[0])) * CELL_IN + 1.0,
            grid_height + strip_rows * CELL_IN + 0.6,
        )
    )
    codes = [[0] * width for _ in range(strip_rows)]
    labels = [[""] * width for _ in range(strip_rows)]
    for address, value in enumerate(storage):
        r, c = divmod(address, width)
        codes[r][c] = SELECTED if address == chosen else IN_VIEW if address in used else UNUSED
        labels[r][c] = str(value)
    _cells(
        fig,
        (0.8, grid_height + 0.1),
        codes,
        labels,
        [f"@{r * width}" for r in range(strip_rows)],
        "storage: flat memory (row labels are addresses)",
    )
    _cells(
        fig, (0.8, 0.1), grid_codes, grid_labels, row_names, f"logical view, shape {layout.shape}"
    )
    return describe(
        fig,
        f"Top: the storage, {len(storage)} numbers in rows of {width}, the slots the view uses "
        f"shaded. Below: the view, shape {layout.shape}, stride {layout.stride}, offset "
        f"{layout.offset}, each element showing the number it reads. Element {selected} "
        f"(outlined) reads storage[{chosen}] = {storage[chosen]}",
    )


def _index_arithmetic(layout: Layout, index: tuple[int, ...]) -> str:
    terms = " + ".join(f"{i}×{s}" for i, s in zip(index, layout.stride, strict=True))
    address = layout.storage_index(index)
    return (
        f"element {index} lives at storage[offset {layout.offset}"
        f"{' + ' + terms if terms else ''}] = storage[{address}]"
    )


def _step_names(ops_text: str) -> list[str]:
    """'(start)', then each step of the chain as typed."""
    return ["(start)"] + ([s.strip() for s in ops_text.split(";")] if ops_text.strip() else [])


def _step_rows(layouts: list[Layout], ops_text: str) -> list[dict[str, object]]:
    names = _step_names(ops_text)
    rows = []
    for k, (name, lay) in enumerate(zip(names, layouts, strict=True)):
        copied = k > 0 and lay.storage_id != layouts[k - 1].storage_id
        rows.append(
            {
                "step": name,
                "shape": lay.shape,
                "stride": lay.stride,
                "offset": lay.offset,
                "contiguous": lay.is_contiguous(),
                "storage": "NEW (copy)" if copied else "same" if k else "arange",
            }
        )
    return rows


def chain_table(shape: str, ops: str) -> str:
    """A chain's layout after every step, as text: what the explorer's table shows."""
    layouts, _ = trace_chain(shape, ops)
    return text_table(_step_rows(layouts, ops))


def _verdict_line(layout: Layout, view_as: str) -> str:
    """The view-or-reshape verdict; a shape that does not fit is reported here, not as an error.

    A shape that does not parse is named by the parser, which already says "view as ...";
    a shape that parses but cannot hold the elements gets the prefix here."""
    try:
        shape = parse_ints(view_as, "view as")
    except CourseError as exc:
        return str(exc)
    try:
        return view_verdict(layout, shape)[1]
    except CourseError as exc:
        return f"view as {view_as!r}: {exc}"


def _fits(layout: Layout, index: tuple[int, ...]) -> bool:
    return len(index) == len(layout.shape) and all(
        0 <= i < n for i, n in zip(index, layout.shape, strict=True)
    )


def _selection(layouts: list[Layout], ops: str, index: str) -> tuple[tuple[int, ...], str]:
    """The element to highlight, and a note when the typed index does not fit the final view.

    An index typed for an earlier chain (or an earlier step) must not blank the whole explorer:
    the first element is shown instead, and the note says after which step the index stopped
    fitting, so the learner sees what the later steps did to the shape."""
    layout = layouts[-1]
    typed = parse_ints(index, "index")  # text that is not an index at all is an error
    if not typed or _fits(layout, typed):
        return typed or (0,) * len(layout.shape), ""
    try:
        layout.storage_index(typed)
    except CourseError as exc:
        problem = str(exc)
    names, fitting = _step_names(ops), [k for k, lay in enumerate(layouts) if _fits(lay, typed)]
    if fitting:
        k = fitting[-1]
        where = (
            f"element {typed} fits the layout after step {names[k]!r} (shape "
            f"{layouts[k].shape}) but no longer after step {names[k + 1]!r} (shape "
            f"{layouts[k + 1].shape})"
        )
    else:
        where = f"element {typed} fits no step of this chain (final shape {layout.shape})"
    shown = (0,) * len(layout.shape)
    return shown, f"{where}: {problem}. Showing element {shown} instead."


def draw_explorer(preset: str, shape: str, ops: str, index: str, view_as: str) -> Drawing:
    """The explorer's draw callback: one chain in, figure + step table + verdicts out."""
    layouts, tensor = trace_chain(shape, ops)
    layout = layouts[-1]
    if layout.numel == 0:
        raise CourseError(f"the view {layout.shape} has no elements: nothing to draw")
    selected, misfit = _selection(layouts, ops, index)
    figure = draw_layout(layout, storage_values(tensor), selected)
    lines = [_index_arithmetic(layout, selected), explain_contiguity(layout)]
    if view_as.strip():
        lines.append(_verdict_line(layout, view_as))
    notes = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    colours = {"True": "#d9f0d3", "False": "#fde0dd", "NEW (copy)": "#fdd0a2"}
    warning = message_html(misfit) if misfit else ""
    table = html_table(_step_rows(layouts, ops), colours)
    return Drawing(figure, f"{warning}{table}<ul>{notes}</ul>")


def explore(preset: str = "the encoder: decoder.weight.T") -> Panel:
    """The stride explorer: a preset or your own chain; pick an element to see where it lives."""
    choices = list(PRESETS) + [CUSTOM]
    require_choice("preset", preset, choices)
    shape, ops = PRESETS.get(preset, ("4, 6", "T"))
    controls = {
        "preset": widgets.Dropdown(options=choices, value=preset, description="preset"),
        "shape": widgets.Text(value=shape, description="shape", continuous_update=False),
        "ops": widgets.Text(
            value=ops,
            description="ops",
            continuous_update=False,  # redraw on Enter, not on every keystroke
            placeholder="T; [:, ::2]; unsqueeze(0)",
            layout=widgets.Layout(width="420px"),
        ),
        "index": widgets.Text(
            value="", description="element", placeholder="0, 0", continuous_update=False
        ),
        "view_as": widgets.Text(
            value="-1",
            description="view as",
            placeholder="e.g. -1 or 6, 4",
            continuous_update=False,
        ),
    }
    panel = Panel(controls, draw_explorer, title="Stride explorer: ops are " + SYNTAX)

    def load_preset(change: dict) -> None:
        if change["new"] in PRESETS:
            new_shape, new_ops = PRESETS[change["new"]]
            held = controls["shape"], controls["ops"]  # redraw once both hold the preset
            with held[0].hold_trait_notifications(), held[1].hold_trait_notifications():
                controls["index"].value, controls["ops"].value = "", new_ops
                controls["shape"].value = new_shape

    controls["preset"].observe(load_preset, names="value")
    return panel


def contiguity_lines(chains: list[tuple[str, str]], width: int = TEXT_WIDTH) -> str:
    """For each (shape, chain): the final stride and offset, then why it is (not) contiguous.

    Notebook 04 shows these after the learner has written the rule, so the notebook imports
    this and never the calculator's own rule (which would answer the exercise)."""
    lines = []
    for shape, ops in chains:
        final = trace_chain(shape, ops)[0][-1]
        lines.append(f"({shape}) {ops}: stride {final.stride}, offset {final.offset}")
        lines.append(
            textwrap.fill(
                explain_contiguity(final), width, initial_indent="    ", subsequent_indent="    "
            )
        )
    return "\n".join(lines)


def view_or_reshape(tensor: torch.Tensor, shape: tuple[int, ...]) -> str:
    """Whether `tensor.view(shape)` is possible, and why (else reshape would copy), filled to
    the notebook's width."""
    return wrapped(view_verdict(Layout.of(tensor), tuple(shape))[1])


def channels_last_layouts() -> list[dict[str, object]]:
    """A second non-default layout: NCHW images stored as NHWC, kept by clone and zeros_like."""
    images = torch.arange(2 * 3 * 4 * 5.0).view(2, 3, 4, 5)  # (N, C, H, W)
    nhwc = images.to(memory_format=torch.channels_last)
    return [
        layout_row("images (N, C, H, W)", images, images),
        layout_row("images.to(memory_format=channels_last)", nhwc, images),
        layout_row("channels_last .clone()", nhwc.clone(), nhwc),
        layout_row("torch.zeros_like(channels_last)", torch.zeros_like(nhwc), nhwc),
        layout_row("torch.relu(channels_last)", torch.relu(nhwc), nhwc),
        layout_row("channels_last .contiguous()", nhwc.contiguous(), nhwc),
        layout_row("channels_last .permute(0, 2, 3, 1)", nhwc.permute(0, 2, 3, 1), nhwc),
    ]
