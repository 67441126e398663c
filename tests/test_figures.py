"""Sizing and rendering shared by every course figure (the diagrams: tests/test_assets.py)."""

from __future__ import annotations

import pytest
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
