"""Sizing and rendering shared by every course figure (the diagrams: tests/test_assets.py)."""

from __future__ import annotations

import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from course.figures import CELL_WIDTH_PX, DPI, figure_png, fitted_figure, integer_ticks


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
