"""Lesson 01's plateau: the story's run beside its contiguous-init twin, and the figures of both.

The runs themselves are `course.model.runs` (every lesson trains the same model); this module
holds what notebook 01 and `python -m course plateau` show of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from course import emps
from course.model.runs import Run, run

if TYPE_CHECKING:  # matplotlib loads in the figure functions: `python -m course plateau`
    from matplotlib.figure import Figure  # without --plot never needs it

FIGURE_PX = (630, 290)  # width, height: a loss curve reads well at 2/3 of a notebook cell


def compare(profile: str = emps.DEFAULT_PROFILE, **kwargs) -> dict[str, Run]:
    """The story's run (transposed init) and the contiguous-init run, same profile and data."""
    return {init: run(profile, init, **kwargs) for init in ("transposed", "contiguous")}


def loss_figure(runs: dict[str, Run], title: str = "Training loss", log: bool = True) -> Figure:
    """Loss curves of several runs, overlaid (a plateau is a curve that flattens too high).

    `log=False` draws the loss on a linear scale, where a flattening tail looks flat."""
    from course.figures import describe, fitted_figure, integer_ticks, use_palette

    fig = fitted_figure(*FIGURE_PX)
    ax = use_palette(fig.add_subplot())
    for label, one in runs.items():
        ax.plot(one.history.loss, label=label, linewidth=1.2)
    ax.set(xlabel="step", ylabel="reconstruction loss", title=title)
    ax.set_yscale("log" if log else "linear")
    integer_ticks(ax)
    ax.legend()
    scale = "logarithmic" if log else "linear"
    return describe(
        fig, f"Line plot of the training loss per step ({scale} scale), one line per run"
    )


def change_figure(one: Run) -> Figure:
    """Max |w - w0| per step for encoder and decoder: a frozen tensor is a flat zero."""
    from course.figures import describe, fitted_figure, integer_ticks, use_palette

    fig = fitted_figure(*FIGURE_PX)
    ax = use_palette(fig.add_subplot())
    for name in ("encoder.weight", "decoder.weight"):
        ax.plot(one.history.change[name], label=name, linewidth=1.5)
    ax.set(xlabel="step", ylabel="max |w - w0|", title="How far each weight moved from its start")
    integer_ticks(ax)
    ax.legend()
    return describe(
        fig, "Line plot of how far the encoder's and the decoder's weights moved from their start"
    )
