"""The hyperparameter sweep widget of notebook 01: try to tune your way out of the plateau.

Each click trains the story's SAE (the story's init, emulated 2.2.1 profile) with the chosen
learning rate, schedule, k, hidden size and auxiliary-loss weight (the knobs the story's author
turned), and overlays its loss curve on the earlier ones. A run takes about as long as the
notebook's own run of as many steps, longer with a larger hidden size, and far longer on a busy
machine, so it runs in `panel.working(...)`: the status line appears at once, follows the steps,
and the controls are disabled meanwhile; when done, the panel says how long the run took here
(measured, never promised). A click that repeats an earlier run's settings says which run it
repeats (the panel's first drawing, before any click, shows run #1 without remarking on it).
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

import ipywidgets as widgets
from matplotlib.figure import Figure

from course.errors import CourseError, require_int
from course.figures import MAX_SERIES, describe, fitted_figure, integer_ticks, use_palette
from course.markup import html_table
from course.model.runs import Run, run
from course.model.training import SCHEDULES
from course.progressbar import Progress
from course.ui import Drawing, Panel

HIDDEN_SIZES = (768, 1536, 3072)
KS = (8, 16, 32, 64)
AUX_WEIGHTS = (0.0, 1 / 32, 0.1, 0.5)
STEPS = 100  # per click: long enough to see the curve flatten
MAX_STEPS = 2000  # a typo in `steps` must not start an hour of training


@dataclass(frozen=True)
class Setting:
    """One point of the sweep."""

    lr: float = 3e-3
    k: int = 32
    hidden: int = 1536
    schedule: str = "constant"
    aux_weight: float = 0.0

    def row(self) -> dict[str, object]:
        """The setting as table cells."""
        return {
            "lr": f"{self.lr:.0e}",
            "k": self.k,
            "hidden": self.hidden,
            "schedule": self.schedule,
            "aux weight": f"{self.aux_weight:.3g}",
        }


def train_setting(setting: Setting, steps: int, progress: Progress | None = None) -> Run:
    """One run of the story's configuration with `setting` changed."""
    return run(
        lr=setting.lr,
        k=setting.k,
        n_features=setting.hidden,
        schedule=setting.schedule,
        aux_weight=setting.aux_weight,
        steps=steps,
        progress=progress,
    )


def sweep_figure(runs: dict[Setting, Run]) -> Figure:
    """Every run's loss, numbered as in the table; the legend sits beside the axes, never on
    the curves, however many runs there are."""
    fig = fitted_figure(height_px=300)
    ax = use_palette(fig.add_subplot())
    numbered = list(enumerate(runs.values(), start=1))[-MAX_SERIES:]
    for number, one in numbered:
        ax.plot(range(1, len(one.history.loss) + 1), one.history.loss, lw=1.2, label=f"#{number}")
    title = "Loss per run" if len(runs) <= MAX_SERIES else f"Loss of the last {MAX_SERIES} runs"
    ax.set(xlabel="step", ylabel="reconstruction loss", yscale="log", title=title)
    integer_ticks(ax)
    columns = 1 + (len(numbered) - 1) // 12
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), ncols=columns)
    return describe(fig, "Line plot of the loss per step of each run, numbered as in the table")


def sweep_rows(runs: dict[Setting, Run]) -> list[dict[str, object]]:
    """One row per run: its setting and the loss it ends at."""
    return [
        {
            "#": number,
            **setting.row(),
            "final loss": f"{one.history.final_loss:.3f}",
        }
        for number, (setting, one) in enumerate(runs.items(), start=1)
    ]


def sweep_widget(first: Run | None = None, steps: int = STEPS) -> Panel:
    """A Panel that trains one setting per click and overlays every run's loss.

    `first` (the notebook's own run of the default setting) fills row #1 without retraining.
    """
    if first is not None and not isinstance(first, Run):
        raise CourseError(
            f"first={first!r} is not a training run: give the Run that `run()` returns (the "
            "notebook's own run of the default setting), or leave it out"
        )
    steps = require_int("steps", steps, 1, MAX_STEPS)
    runs: dict[Setting, Run] = {}
    if first is not None:
        runs[Setting()] = first
    clicked = False  # the first drawing is the panel's own, made before any click

    def draw(
        lr: float, k: int, hidden: int, schedule: str, aux_weight: float, panel: Panel
    ) -> Drawing:
        nonlocal clicked
        setting = Setting(lr, k, hidden, schedule, aux_weight)
        note = ""
        if setting not in runs:
            started = perf_counter()
            runs[setting] = _train_in(panel, setting, steps)
            seconds = perf_counter() - started
            note = f"Run #{len(runs)} took {seconds:.0f} s on this machine."
        elif clicked:
            number = list(runs).index(setting) + 1
            note = f"Run #{number} already used these settings: change a knob to train another."
        clicked = True
        table = html_table(sweep_rows(runs))
        legend = (
            "<p>final loss: the mean over the last 10% of the steps (one step's loss "
            "depends on its random batch).</p>"
        )
        return Drawing(sweep_figure(runs), legend + table, note)

    controls = {
        "lr": widgets.FloatLogSlider(
            value=3e-3, base=10, min=-4, max=-2, step=0.25, description="lr", readout_format=".0e"
        ),
        "k": widgets.Dropdown(options=KS, value=32, description="k"),
        "hidden": widgets.Dropdown(options=HIDDEN_SIZES, value=1536, description="hidden"),
        "schedule": widgets.Dropdown(options=SCHEDULES, value="constant", description="schedule"),
        "aux_weight": widgets.Dropdown(options=AUX_WEIGHTS, value=0.0, description="aux loss"),
    }
    return Panel(controls, draw, title="Hyperparameter sweep (emulated MPS)", button="Train")


def _train_in(panel: Panel, setting: Setting, steps: int) -> Run:
    """Train inside the panel's `working` block: status at once, progress, controls disabled."""
    described = ", ".join(f"{k} {v}" for k, v in setting.row().items())
    with panel.working(f"Training ({described}): {steps} steps ..."):
        return train_setting(setting, steps, panel.progress)
