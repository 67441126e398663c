"""Sizing and rendering shared by every course figure (the diagrams: tests/test_assets.py)."""

from __future__ import annotations

import base64
import struct
import subprocess
import sys
from collections.abc import Callable
from types import SimpleNamespace

import pytest
import torch
from matplotlib.axes import Axes
from matplotlib.colors import to_hex
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Polygon, Rectangle
from matplotlib.text import Text

from course.figures import (
    CELL_WIDTH_PX,
    DPI,
    MAX_SERIES,
    MIN_FONT_PT,
    PALETTE,
    describe,
    description,
    figure_alt,
    figure_html,
    figure_png,
    fitted_figure,
    integer_ticks,
    series_style,
    use_palette,
)


def test_fitted_figures_fit_the_cell_area():
    fig = fitted_figure(5000, 300)
    assert fig.get_size_inches()[0] * DPI == pytest.approx(CELL_WIDTH_PX)
    assert fitted_figure(450, 200).get_size_inches()[1] * DPI == pytest.approx(200)


@pytest.mark.parametrize("axis", ["x", "y"])
def test_integer_ticks_on_axes_of_counts(axis):
    fig = Figure()
    ax = fig.add_subplot()
    ax.plot([1, 2, 3, 4], [1, 2, 3, 4])
    integer_ticks(ax, axis)
    figure_png(fig)
    ticks = ax.get_xticks() if axis == "x" else ax.get_yticks()
    assert all(float(t).is_integer() for t in ticks)


def test_a_single_step_still_gets_a_whole_tick():
    fig = Figure()
    ax = fig.add_subplot()
    ax.plot([1], [3.0], marker=".")
    ax.set_xlim(0.5, 1.5)
    integer_ticks(ax)
    figure_png(fig)
    visible = [t for t in ax.get_xticks() if 0.5 <= t <= 1.5]
    assert visible == [1.0]


def _narrow_panel() -> Axes:
    """The narrowest panel the course draws: one of the switchboard's four in a 840 px figure."""
    fig = fitted_figure(840, 240)
    ax = fig.subplots(1, 4, sharey=True)[0]
    ax.plot([1, 200], [1, 2])
    integer_ticks(ax)
    figure_png(fig)  # lays the figure out, so the axis knows its drawn length
    return ax


def _visible_ticks(ax: Axes, steps: int) -> list[float]:
    ax.set_xlim(0.5, steps + 0.5)
    return [t for t in ax.xaxis.get_major_locator()() if 0.5 <= t <= steps + 0.5]


def test_a_narrow_axis_of_1_to_200_steps_gets_a_bounded_number_of_whole_ticks():
    ax = _narrow_panel()
    for steps in range(1, 201):
        ticks = _visible_ticks(ax, steps)
        assert 1 <= len(ticks) <= 5, (steps, ticks)
        assert all(float(t).is_integer() for t in ticks), (steps, ticks)


@pytest.mark.parametrize("steps", [9, 60, 99, 100, 200])
def test_tick_labels_on_a_narrow_axis_never_touch(steps):
    ax = _narrow_panel()
    ax.set_xlim(0.5, steps + 0.5)
    figure_png(ax.figure)
    renderer = ax.figure._get_renderer()
    boxes = [
        tick.label1.get_window_extent(renderer)
        for tick in ax.xaxis.get_major_ticks()
        if 0.5 <= tick.get_loc() <= steps + 0.5
    ]
    gaps = [right.x0 - left.x1 for left, right in zip(boxes, boxes[1:], strict=False)]
    assert all(gap >= 6 for gap in gaps), (steps, gaps)  # at least half a character apart


def test_integer_ticks_name_the_allowed_axes():
    with pytest.raises(ValueError, match="'z'.*'x' or 'y'"):
        integer_ticks(Figure().add_subplot(), "z")


def test_pngs_are_deterministic():
    def draw() -> Figure:
        fig = fitted_figure(300, 200)
        fig.add_subplot().plot([0, 1], [1, 0])
        return fig

    png = figure_png(draw())
    assert png.startswith(b"\x89PNG") and png == figure_png(draw())


# --- every course figure fits the cell and keeps its text readable ------------------------------


def _history(steps: int = 40) -> SimpleNamespace:
    """What the figures read of a training run, without training one."""
    falling = [1 / (1 + step) for step in range(steps)]
    change = {"encoder.weight": [0.0] * steps, "decoder.weight": falling}
    return SimpleNamespace(history=SimpleNamespace(loss=falling, change=change))


def _switchboard() -> Figure:
    from course.adam import switchboard

    change = tuple(1e-3 * step for step in range(1, 61))
    return switchboard.outcome_figure(
        [
            switchboard.Outcome(case, "trains", change, change, 1.0, False, 1e-3)
            for case in switchboard.CASES
        ],
        highlight="both",
    )


def _bench() -> Figure:
    from course.kernels.cpp import bench

    spread = bench.Spread(1.2, 1.1, 1.3)
    timings = [
        bench.Timing(kernel, layout, numel, (1e-3,), spread, 0.5)
        for kernel in ("native", "mine")
        for layout in bench.BENCH_LAYOUTS
        for numel in (1_000, 100_000)
    ]
    return bench.plot(bench.BenchRun(timings, {}, 1, {1_000: 5, 100_000: 5}, None))


def _builders() -> dict[str, Callable[[], Figure]]:
    from course.adam.bias_correction import draw
    from course.audit.report import flagged_figure
    from course.layout.timing import Timing, timing_figure
    from course.story import plateau, sweep
    from course.story.features import recovery_figure
    from course.ui import widget_check

    flagged = [SimpleNamespace(flagged=True, op=f"{op}.default") for op in ("addcmul_", "normal_")]
    return {
        "widget_check": lambda: widget_check().figure,
        "switchboard": _switchboard,
        "bias_correction": lambda: draw(0.9, 0.999, (1, 100)).figure,
        "sweep": lambda: sweep.sweep_figure({sweep.Setting(lr=n): _history() for n in range(14)}),
        "loss": lambda: plateau.loss_figure({"transposed": _history(), "contiguous": _history()}),
        "change": lambda: plateau.change_figure(_history()),
        "recovery": lambda: recovery_figure({"story": torch.rand(64), "fixed": torch.rand(64)}),
        "timing": lambda: timing_figure(
            [Timing("x.sum()", 1.0, 2.5), Timing("x.exp()", 1.0, 1.1)], [(1, 0.4), (16, 1.9)]
        ),
        "bench": _bench,
        "audit": lambda: flagged_figure({"emulated:2.2.1-macos14": flagged, "cpu": []}),
    }


def _explorer(preset: str, shape: str = "", ops: str = "") -> Callable[[], Figure]:
    from course.layout.explorer import PRESETS, draw_explorer

    shape, ops = PRESETS.get(preset, (shape, ops))
    return lambda: draw_explorer(preset, shape, ops, "", "-1").figure


def _dispatch_path() -> Figure:
    from course.dispatch.explorer import draw_explorer

    return draw_explorer("addcmul_", "CPU tensor, requires_grad").figure


def _all_builders() -> dict[str, Callable[[], Figure]]:
    """Every figure builder: the plots, each stride-explorer preset (and views wider than its
    strip), the dispatch explorer's path."""
    from course.layout.explorer import CUSTOM, PRESETS

    explorers = {f"explorer: {preset}": _explorer(preset) for preset in PRESETS}
    explorers["explorer: 64 in a row"] = _explorer(CUSTOM, "64", "")
    explorers["explorer: 2 rows of 30, 3-d"] = _explorer(CUSTOM, "2, 1, 30", "")
    return {**_builders(), **explorers, "dispatch path": _dispatch_path}


@pytest.mark.parametrize("name", sorted(_all_builders()))
def test_every_course_figure_fits_the_cell_with_text_of_at_least_10_pt(name):
    """A wider PNG scrolls sideways or is scaled down (8 pt legends got small): drawn as shown."""
    fig = _all_builders()[name]()
    png = figure_png(fig)
    width = struct.unpack(">I", png[16:20])[0]  # the PNG header's width field
    assert width <= CELL_WIDTH_PX, f"{name}: {width} px"
    sizes = {
        text.get_text(): text.get_fontsize()
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip()
    }
    small = {label: size for label, size in sizes.items() if size < MIN_FONT_PT}
    assert not small, f"{name}: text below {MIN_FONT_PT} pt: {small}"
    if fig.get_layout_engine() is None:  # a diagram: cropped to its content when saved
        return
    drawn = fig.get_tightbbox()  # in inches: everything drawn, as a tight crop would keep it
    width_in, height_in = fig.get_size_inches()
    inside = drawn.x0 > -0.02 and drawn.y0 > -0.02
    assert inside and drawn.x1 < width_in + 0.02 and drawn.y1 < height_in + 0.02, (
        f"{name}: drawn {drawn.bounds} beyond the figure's {width_in:.2f} x {height_in:.2f} in"
    )


# --- one colour-blind-safe palette, never colour alone, and alt text ------------------------------

PALETTE_HEX = set(PALETTE.values())
# course.ui's smoke-test bar chart (widget_check) is drawn by course/ui.py
OWN_COLOURS = {"widget_check"}


def _series(ax: Axes) -> list[Line2D]:
    """The axes' visible lines, less the caps of error bars (drawn in their line's colour)."""
    caps = {id(cap) for c in ax.containers if isinstance(c, ErrorbarContainer) for cap in c[1]}
    return [line for line in ax.get_lines() if line.get_visible() and id(line) not in caps]


def _look(line: Line2D) -> tuple[object, str]:
    """What tells a line apart besides its colour: its dash pattern and its marker."""
    dashes = "solid" if line.get_linestyle() == "-" else line._unscaled_dash_pattern
    return dashes, str(line.get_marker())


@pytest.mark.parametrize("name", sorted(set(_all_builders()) - OWN_COLOURS))
def test_every_figure_draws_in_the_palette_and_never_by_colour_alone(name):
    fig = _all_builders()[name]()
    for ax in fig.axes:
        lines = _series(ax)
        for line in lines:
            assert to_hex(line.get_color()) in PALETTE_HEX, (name, line.get_label())
        looks = [_look(line) for line in lines]
        assert len(set(looks)) == len(looks), f"{name}: lines differ only by colour: {looks}"
        filled = [p for p in ax.patches if isinstance(p, Rectangle | Polygon) and p.get_fill()]
        for patch in filled:
            assert to_hex(patch.get_facecolor(), keep_alpha=False) in PALETTE_HEX, name
        stepped = [p for p in ax.patches if isinstance(p, Polygon) and not p.get_fill()]
        for patch in stepped:
            assert to_hex(patch.get_edgecolor(), keep_alpha=False) in PALETTE_HEX, name
        dashes = [(p.get_linestyle(), p.get_hatch()) for p in stepped]
        assert len(set(dashes)) == len(dashes), f"{name}: outlines differ only by colour"


@pytest.mark.parametrize("name", sorted(_all_builders()))
def test_every_figure_says_what_it_shows(name):
    fig = _all_builders()[name]()
    if name not in OWN_COLOURS:
        assert len(description(fig).split()) >= 10, f"{name}: describe() what it shows"
    alt = figure_alt(fig)
    assert alt.startswith(description(fig)) and len(alt.split()) >= 4, alt


def test_the_alt_text_reads_titles_axes_and_legend():
    fig = describe(Figure(), "Two lines.")
    ax = use_palette(fig.add_subplot())
    ax.plot([1, 2], label="a")
    ax.plot([2, 1], label="b")
    ax.set(title="loss", xlabel="step\nt", ylabel="value")
    ax.legend()
    assert figure_alt(fig) == "Two lines. loss (x: step t, y: value) legend: a, b"
    bare = Figure()
    bare.add_subplot()
    assert figure_alt(bare) == ""


def test_figures_display_as_an_image_with_their_alt_text():
    fig = describe(fitted_figure(200, 100), 'An "empty" plot')
    png = base64.b64encode(figure_png(fig)).decode("ascii")
    expected = f"<img src='data:image/png;base64,{png}' alt='An &quot;empty&quot; plot' "
    assert figure_html(fig) == expected + "style='max-width:100%'>"


def test_series_styles_never_repeat_a_look_and_say_the_allowed_range():
    for marked in (False, True):
        looks = []
        with pytest.raises(ValueError, match="series index=.*allowed: 0 to"):
            for index in range(MAX_SERIES + 1):
                style = series_style(index, marked)
                assert style["color"] in PALETTE_HEX
                looks.append((style["linestyle"], style["marker"]))
        assert len(looks) >= 20 and len(set(looks)) == len(looks)
    assert all(series_style(i, marked=True)["marker"] != "None" for i in range(20))


def test_a_sweep_of_more_runs_than_styles_shows_the_latest():
    from course.story import sweep

    runs = {sweep.Setting(lr=n): _history(5) for n in range(MAX_SERIES + 3)}
    ax = sweep.sweep_figure(runs).axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[0] == "#4" and labels[-1] == f"#{MAX_SERIES + 3}" and len(labels) == MAX_SERIES
    assert str(MAX_SERIES) in ax.get_title()


def test_a_notebook_stores_a_course_figure_with_its_alt_text(tmp_path):
    """As a kernel shows a returned Figure: an <img> with its alt text, no bare PNG output."""
    script = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "import course\n"
        "from course.figures import describe, fitted_figure\n"
        "figure = describe(fitted_figure(90, 90), 'A dot')\n"
        "data, metadata = shell.display_formatter.format(figure)\n"
        "print(sorted(data), data['text/html'][-60:])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=True
    ).stdout
    assert out.startswith("['text/html', 'text/plain']"), out
    assert out.strip().endswith(" alt='A dot' style='max-width:100%'>"), out
