"""Sizing and rendering shared by every course figure (the diagrams: tests/test_assets.py)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from types import SimpleNamespace

import pytest
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text

from course.figures import (
    CELL_WIDTH_PX,
    DPI,
    MIN_FONT_PT,
    figure_png,
    fitted_figure,
    integer_ticks,
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


@pytest.mark.parametrize("name", sorted(_builders()))
def test_every_course_figure_fits_the_cell_with_text_of_at_least_10_pt(name):
    """A wider PNG scrolls sideways or is scaled down (8 pt legends got small): drawn as shown."""
    fig = _builders()[name]()
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
    drawn = fig.get_tightbbox()  # in inches: everything drawn, as a tight crop would keep it
    width_in, height_in = fig.get_size_inches()
    inside = drawn.x0 > -0.02 and drawn.y0 > -0.02
    assert inside and drawn.x1 < width_in + 0.02 and drawn.y1 < height_in + 0.02, (
        f"{name}: drawn {drawn.bounds} beyond the figure's {width_in:.2f} x {height_in:.2f} in"
    )
