"""The course's figures: how every figure is sized and rendered, and the diagrams of `assets/`.

Every course figure is a matplotlib `Figure` (no pyplot, no global state), so one module holds
what they share: `fitted_figure` sizes a figure for a notebook cell (its PNG is shown at its
natural size, so 10 pt text stays 10 pt on screen; no course figure uses text below MIN_FONT_PT),
`integer_ticks` keeps axes of counts on
whole numbers, and `figure_png` renders deterministic PNG bytes. Every plot draws in one
colour-blind-safe PALETTE and tells its lines apart by line style and marker too (`use_palette`,
`series_style`); every figure says what it shows (`describe`, `figure_alt`), and that alt text
travels with a notebook's stored output (`figure_html`) onto the site. The widget shell
(`course.ui`), the lessons' plots and the diagrams below all use them; none of it needs
ipywidgets.

Learner copies of the notebooks carry no outputs, so the diagrams that carry the story stand in
the markdown as PNG files in `assets/`, drawn here. `scripts/make_assets.py` saves them and
tests/test_assets.py redraws them to prove the committed files are not stale.

Each diagram states only what the notebook that shows it already says, so none spoils an
exercise: the stack's layers are PyTorch's own, not what the investigation finds in them, the
dispatcher's path does not list which dispatch keys run (notebook 05 asks that),
and the Placeholder's lost write is drawn for notebook 06, after the cause is known.
Each diagram's axes is laid out in units of SCALE inches, so sizes read directly; its text is
at least MIN_FONT_PT and its PNG, saved at DPI like every course figure, fits CELL_WIDTH_PX.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.patches import FancyBboxPatch, Rectangle
from matplotlib.ticker import MaxNLocator

# JupyterLab's code-cell output area in a 1280x800 window, file browser open, is about 840 px; a
# widget's image has 2 px margins each side. A wider PNG scrolls sideways or is scaled down.
CELL_WIDTH_PX = 820
DPI = 90
MIN_FONT_PT = 10


def fitted_figure(width_px: int = CELL_WIDTH_PX, height_px: int = 320) -> Figure:
    """A Figure whose PNG is shown at its natural size inside a notebook cell, never shrunk.

    Matplotlib sizes in inches; a notebook shows the PNG at DPI pixels per inch, so a figure made
    here fits the cell area and its 10 pt text is 10 pt on screen. Its PNG is exactly
    `width_px` wide (at most CELL_WIDTH_PX): see `figure_png`.
    """
    width_px = min(width_px, CELL_WIDTH_PX)
    return Figure(figsize=(width_px / DPI, height_px / DPI), layout="constrained")


def integer_ticks(ax: Axes, axis: str = "x") -> None:
    """Whole-number ticks on an axis of counts (steps, runs): never 2.5, and one tick is enough
    for an axis of a single step.

    How many ticks follows the axis' drawn length (matplotlib's "auto": one per three label
    heights, at most ten), not the number of steps: a fixed count of ten crowds two- and
    three-digit labels into each other on a narrow panel.
    """
    if axis not in ("x", "y"):
        raise ValueError(f"axis={axis!r}; allowed: 'x' or 'y'")
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(
        MaxNLocator(nbins="auto", steps=[1, 2, 5, 10], integer=True, min_n_ticks=1)
    )


def figure_png(fig: Figure, dpi: int = DPI) -> bytes:
    """Render a matplotlib figure to PNG bytes (deterministic: no timestamp metadata).

    A constrained-layout figure (every `fitted_figure`) already fits its content, so it is saved
    at exactly its own size: a tight bounding box would add margins and can grow past the width
    the figure was drawn for. Other figures (the diagrams) are cropped to their content.
    """
    constrained = isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
    buf = io.BytesIO()
    fig.savefig(
        buf,
        format="png",
        dpi=dpi,
        bbox_inches=None if constrained else "tight",
        metadata={"Software": None},
    )
    return buf.getvalue()


# --- one colour-blind-safe palette, and never colour alone ------------------------------------

# Okabe & Ito's eight colours, told apart with every common colour-vision deficiency. Every line,
# bar and fill of a course plot takes its colour from here.
PALETTE: dict[str, str] = {
    "black": "#000000",
    "orange": "#e69f00",
    "sky blue": "#56b4e9",
    "bluish green": "#009e73",
    "yellow": "#f0e442",
    "blue": "#0072b2",
    "vermillion": "#d55e00",
    "reddish purple": "#cc79a7",
}
# Series in this order (yellow is too pale for a line on white).
SERIES_COLOURS = tuple(
    PALETTE[name]
    for name in ("blue", "orange", "bluish green", "vermillion", "reddish purple", "sky blue")
)
SERIES_LINESTYLES = ("-", "--", "-.")
SERIES_MARKERS = ("None", "o", "s", "^", "D", "v", "P", "X")
# A threshold or a true value is drawn black and dotted: no data series is ever dotted.
REFERENCE_LINE = {"color": PALETTE["black"], "linestyle": ":", "linewidth": 1.2}
MAX_SERIES = len(SERIES_LINESTYLES) * len(SERIES_MARKERS)  # series one axes can tell apart


def series_style(index: int, marked: bool = False) -> dict[str, object]:
    """The colour, line style and marker of a plot's index-th series.

    Two series of one axes never differ by colour alone: each (line style, marker) pair is used
    once, so a reader who cannot tell the colours apart (or prints in grey) still tells the
    lines apart. Long lines carry a marker every tenth of their length from the fourth series
    on; `marked` lines (a few measured points) mark every point, each series with its own shape.
    """
    limit = MAX_SERIES - len(SERIES_LINESTYLES) if marked else MAX_SERIES
    if not 0 <= index < limit:
        raise ValueError(f"series index={index}; allowed: 0 to {limit - 1}")
    shapes, styles = len(SERIES_MARKERS) - 1, len(SERIES_LINESTYLES)
    return {
        "color": SERIES_COLOURS[index % len(SERIES_COLOURS)],
        "linestyle": SERIES_LINESTYLES[(index // shapes if marked else index) % styles],
        "marker": SERIES_MARKERS[1 + index % shapes if marked else index // styles],
        "markevery": None if marked else 0.1,
    }


def use_palette(ax: Axes) -> Axes:
    """Make the axes' successive `plot`/`errorbar` calls take `series_style(0)`, `(1)`, ..."""
    styles = [series_style(i) for i in range(MAX_SERIES)]
    ax.set_prop_cycle(**{key: [style[key] for style in styles] for key in styles[0]})
    return ax


# --- alt text: what a figure shows, for a reader who cannot see it ------------------------------

_DESCRIPTION = "_course_description"


def describe(fig: Figure, text: str) -> Figure:
    """Attach what the figure shows, in words (its alt text begins with it); returns the figure."""
    setattr(fig, _DESCRIPTION, text.strip())
    return fig


def description(fig: Figure) -> str:
    """What `describe` attached to the figure ("" if nothing)."""
    return getattr(fig, _DESCRIPTION, "")


def figure_alt(fig: Figure) -> str:
    """The figure's alt text: its description, then each axes' title, axis labels and legend.

    The description says what the figure is for; the rest is read off the drawing itself, so the
    alt text names the series a sighted reader tells apart in the legend.
    """
    parts = [description(fig)]
    suptitle = fig.get_suptitle()
    if suptitle:
        parts.append(suptitle)
    for ax in fig.axes:
        title = " ".join(ax.get_title(loc) for loc in ("left", "center", "right"))
        axis = ", ".join(
            f"{name}: {label}"
            for name, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel()))
            if label
        )
        legend = ax.get_legend()
        series = [t.get_text() for t in legend.get_texts()] if legend else []
        words = [
            title,
            f"({axis})" if axis else "",
            f"legend: {', '.join(series)}" if series else "",
        ]
        parts.append(" ".join(" ".join(word.split()) for word in words if word.strip()))
    return ". ".join(part.rstrip(".") for part in parts if part)


def png_html(png_base64: str, alt: str) -> str:
    """A PNG as an <img> that says what it shows, at most as wide as its container."""
    alt = html.escape(alt, quote=True)
    return f"<img src='data:image/png;base64,{png_base64}' alt='{alt}' style='max-width:100%'>"


def figure_html(fig: Figure) -> str:
    """A figure as HTML, for IPython to show (`course/__init__.py` registers it).

    Why HTML and not a PNG output: JupyterLab draws a PNG output as an <img> without alt text,
    whatever the output's metadata says, so a screen reader would meet an unnamed image. An
    <img> in HTML carries its alt in the notebook, in JupyterLab, in VS Code and on the site.
    """
    return png_html(base64.b64encode(figure_png(fig)).decode("ascii"), figure_alt(fig))


# --- the diagrams of assets/ --------------------------------------------------------------------

INK = "#333333"
MUTED = "#666666"
BLUE = "#9ecae1"  # in use / in the view (the stride explorer's colours, beside ORANGE)
ORANGE = PALETTE["orange"]  # the element being followed, also outlined: never colour alone
GREY = "#e0e0e0"
GREEN = "#c7e9c0"
RED = "#f4c7c3"
TEMP = "#fff3cd"  # a temporary copy
CELL = 0.38  # one tensor element, in data units
# A diagram's data unit is SCALE inches: its layout stays in round numbers while its text (drawn
# at DPI, like every course figure) is at least MIN_FONT_PT and its PNG at most CELL_WIDTH_PX wide.
SCALE = 1.14


def _canvas(width: float, height: float) -> tuple[Figure, Axes]:
    """A blank figure whose data coordinates are SCALE inches from the bottom-left corner."""
    fig = Figure(figsize=(width * SCALE, height * SCALE))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return fig, ax


def _box(ax: Axes, x: float, y: float, w: float, h: float, fill: str, dashed: bool = False) -> None:
    """A rounded box with its bottom-left corner at (x, y)."""
    ax.add_patch(
        FancyBboxPatch(
            (x, y),
            w,
            h,
            boxstyle="round,pad=0,rounding_size=0.08",
            fc=fill,
            ec=MUTED,
            ls="--" if dashed else "-",
        )
    )


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], label: str = "") -> None:
    """An arrow from start to end, with an optional label beside its middle."""
    ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "-|>", "color": MUTED})
    if label:
        mid = ((start[0] + end[0]) / 2 + 0.08, (start[1] + end[1]) / 2)
        ax.text(*mid, label, fontsize=11, color=MUTED, va="center", ha="left")


def _grid(
    ax: Axes,
    x: float,
    y: float,
    labels: Sequence[Sequence[str]],
    fills: Sequence[Sequence[str]],
    size: float = CELL,
) -> None:
    """Square cells, row 0 on top, with their top-left corner at (x, y)."""
    for r, row in enumerate(labels):
        for c, label in enumerate(row):
            left, bottom = x + c * size, y - (r + 1) * size
            followed = fills[r][c] == ORANGE
            ax.add_patch(
                Rectangle(
                    (left, bottom), size, size, fc=fills[r][c], ec=INK, lw=2.5 if followed else 0.8
                )
            )
            ax.text(
                left + size / 2, bottom + size / 2, label, ha="center", va="center", fontsize=11
            )


# --- notebook 01: the layers the investigation walks down ---------------------------------------

# Shown before the investigation starts: each layer is named as PyTorch's, never by what the
# investigation finds there (no particular optimizer, op or memory layout).
LAYERS: tuple[tuple[str, str, str], ...] = (
    ("Training", "the run you watch: its loss and its weights", "01"),
    ("Library", "the Python parts you call: modules, autograd, optimizers", "02-03"),
    ("Tensor", "what a tensor is, beneath the values it prints", "04"),
    ("Dispatcher", "how one Python call finds the code for its device", "05"),
    ("Kernel", "the code that computes, on each device", "06-07"),
)
LAYER_FILLS = ("#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6")


def stack_layers_figure() -> Figure:
    """The five layers of the stack, top to bottom, with the notebooks that open each one."""
    fig, ax = _canvas(7.6, 4.1)
    ax.text(0.2, 3.8, "The investigation walks down the stack", fontsize=14, weight="bold")
    ax.text(6.95, 3.8, "notebook", fontsize=11, color=MUTED, ha="center")
    for row, ((name, what, notebooks), fill) in enumerate(zip(LAYERS, LAYER_FILLS, strict=True)):
        y = 3.05 - row * 0.68
        _box(ax, 0.9, y, 5.65, 0.52, fill)
        ax.text(1.05, y + 0.26, name, fontsize=13, weight="bold", va="center", color=INK)
        ax.text(2.35, y + 0.26, what, fontsize=11.5, va="center", color=INK)
        ax.text(6.95, y + 0.26, notebooks, fontsize=12, va="center", ha="center", color=INK)
    _arrow(ax, (0.5, 3.55), (0.5, 0.35))
    ax.text(0.3, 1.95, "deeper", rotation=90, fontsize=11, color=MUTED, va="center", ha="center")
    return fig


# --- notebook 04: a tensor's storage and strides -------------------------------------------------


def _view_cells(shape: tuple[int, int], stride: tuple[int, int]) -> list[list[str]]:
    """Each element's storage address (= its value, for an arange)."""
    rows, cols = shape
    return [[str(r * stride[0] + c * stride[1]) for c in range(cols)] for r in range(rows)]


def storage_strides_figure() -> Figure:
    """One storage, two views: x = arange(12).view(3, 4) and x.T, with the strides as steps."""
    fig, ax = _canvas(7.6, 4.3)
    follow = 6  # x[1, 2] and x.T[2, 1]: the same storage slot
    ax.text(0.2, 4.0, "storage: 12 numbers in a row, one after another", fontsize=12, weight="bold")
    _grid(
        ax,
        0.9,
        3.8,
        [[str(i) for i in range(12)]],
        [[ORANGE if i == follow else BLUE for i in range(12)]],
    )
    for i in range(12):
        ax.text(0.9 + (i + 0.5) * CELL, 3.28, f"@{i}", fontsize=10, color=MUTED, ha="center")
    views = (
        (0.9, "x = torch.arange(12).view(3, 4)", (3, 4), (4, 1), (1, 2)),
        (4.4, "x.T  (a view: same storage, no copy)", (4, 3), (1, 4), (2, 1)),
    )
    for left, title, shape, stride, picked in views:
        ax.text(left, 2.95, title, fontsize=11.5, family="monospace")
        ax.text(left, 2.72, f"shape {shape}, stride {stride}", fontsize=11.5, color=INK)
        labels = _view_cells(shape, stride)
        fills = [
            [ORANGE if (r, c) == picked else BLUE for c in range(shape[1])] for r in range(shape[0])
        ]
        _grid(ax, left, 2.55, labels, fills)
        right = left + shape[1] * CELL
        _arrow(ax, (left, 2.55 - shape[0] * CELL - 0.12), (right, 2.55 - shape[0] * CELL - 0.12))
        ax.text(
            left + 0.05,
            2.55 - shape[0] * CELL - 0.3,
            f"along a row: +{stride[1]} in storage",
            fontsize=10.5,
            color=MUTED,
        )
        _arrow(ax, (right + 0.15, 2.55), (right + 0.15, 2.55 - shape[0] * CELL), "")
        ax.text(
            right + 0.25,
            2.55 - shape[0] * CELL / 2,
            f"down a column:\n+{stride[0]} in storage",
            fontsize=10.5,
            color=MUTED,
            va="center",
        )
    ax.text(
        0.2,
        0.12,
        "element [i, j] lives at storage[offset + i × stride[0] + j × stride[1]]:"
        "  x[1, 2] and x.T[2, 1] are both storage[6]",
        fontsize=11,
        color=INK,
    )
    return fig


# --- notebook 05: the path of one call through the dispatcher -----------------------------------

BACKENDS: tuple[tuple[str, str], ...] = (
    ("CPU, CUDA", "addcmul_out"),
    ("MPS, torch 2.2.1", "addcmul_out_mps\n(PointwiseOps.mm)"),  # lesson 05: yours may differ
    ("PrivateUse1 = emps", "this course's emulated\nMPS (torch.library)"),
)
CALL_PATH: tuple[tuple[str, str], ...] = (
    ("exp_avg_sq.addcmul_(grad, grad, value=1 - beta2)", "a call in torch/optim/adam.py"),
    ("Python binding (generated C++)", "parses the arguments: no Python source to read"),
    (
        "Dispatcher",
        "reads the arguments' dispatch keys and runs one kernel per key,\n"
        "highest priority first, down to the backend's kernel",
    ),
)


def dispatch_path_figure() -> Figure:
    """Python call -> binding -> dispatcher -> one backend kernel; the registry generates both."""
    fig, ax = _canvas(7.6, 4.9)
    fills = ("#ffffff", "#e8eef8", "#f4f4f4")
    for row, ((title, detail), fill) in enumerate(zip(CALL_PATH, fills, strict=True)):
        y = 4.1 - row * 1.0
        height = 0.78 if row == 2 else 0.62
        _box(ax, 0.3, y - height + 0.62, 4.6, height, fill)
        family = "monospace" if row == 0 else "sans-serif"
        ax.text(2.6, y + 0.42, title, ha="center", fontsize=11.5, weight="bold", family=family)
        ax.text(2.6, y + 0.22, detail, ha="center", va="top", fontsize=10.5, color=MUTED)
        if row:
            _arrow(ax, (2.6, y + 0.84), (2.6, y + 0.64))
    for col, (key, kernel) in enumerate(BACKENDS):
        x = 0.2 + col * 1.62
        _box(ax, x, 0.45, 1.56, 0.95, GREEN if col == 1 else "#f4f4f4")
        ax.text(x + 0.78, 1.18, key, ha="center", fontsize=10.5, weight="bold")
        ax.text(x + 0.78, 0.75, kernel, ha="center", va="center", fontsize=10)
        _arrow(ax, (2.6, 1.92), (x + 0.78, 1.42))
    ax.text(
        2.6,
        0.15,
        "one structured out= kernel serves addcmul, addcmul_ and addcmul.out",
        ha="center",
        fontsize=10.5,
        color=MUTED,
    )
    _box(ax, 5.4, 2.35, 2.05, 1.5, TEMP, dashed=True)
    ax.text(
        6.42,
        3.55,
        "native_functions.yaml",
        ha="center",
        fontsize=11,
        weight="bold",
        family="monospace",
    )
    ax.text(
        6.42,
        2.95,
        "the operator registry,\nread when torch is built:\ngenerates the binding and\n"
        "registers torch's kernels",
        ha="center",
        va="center",
        fontsize=10.5,
    )
    _arrow(ax, (5.4, 3.42), (4.92, 3.42), "")
    _arrow(ax, (5.4, 2.6), (4.92, 2.45), "")
    return fig


# --- notebook 06: the Placeholder's lost write beside the working copy-back ---------------------


def _state(ax: Axes, x: float, y: float, caption: str, value: str, fill: str) -> None:
    """A 2x3 tensor whose every element is `value`, captioned on its right."""
    _grid(ax, x, y, [[value] * 3] * 2, [[fill] * 3] * 2, size=0.3)
    ax.text(x + 1.05, y - 0.3, caption, fontsize=10.5, va="center", color=INK)


def placeholder_lost_write_figure() -> Figure:
    """Two kernels on a non-contiguous output: one writes into a temporary and drops it."""
    fig, ax = _canvas(7.8, 4.6)
    columns = (
        (
            0.2,
            "Output through a Placeholder (broken)",
            RED,
            "temporary dropped:\noutput still 0 (the write is lost)",
            "0",
        ),
        (
            4.05,
            "Gather, compute, copy back (working)",
            GREEN,
            "output.copy_(temporary):\noutput updated",
            "2",
        ),
    )
    for x, title, end_fill, end_caption, end_value in columns:
        ax.text(x, 4.3, title, fontsize=12.5, weight="bold")
        _state(ax, x + 0.1, 4.05, "output: a non-contiguous\nview (say, a .T)", "0", BLUE)
        _arrow(ax, (x + 0.55, 3.4), (x + 0.55, 3.1), "gather")
        _state(ax, x + 0.1, 3.05, "a contiguous\ntemporary copy", "0", TEMP)
        _arrow(ax, (x + 0.55, 2.4), (x + 0.55, 2.1), "compute")
        _state(ax, x + 0.1, 2.05, "the result lands in\nthe temporary", "2", TEMP)
        _arrow(ax, (x + 0.55, 1.4), (x + 0.55, 1.1), "")
        _state(ax, x + 0.1, 1.05, end_caption, end_value, end_fill)
    ax.text(
        0.2,
        0.12,
        "Both kernels compute the same result; only the second one copies it back into the output.",
        fontsize=11,
        color=INK,
    )
    return fig


FIGURES: dict[str, Callable[[], Figure]] = {
    "stack_layers": stack_layers_figure,
    "storage_strides": storage_strides_figure,
    "dispatch_path": dispatch_path_figure,
    "placeholder_lost_write": placeholder_lost_write_figure,
}
