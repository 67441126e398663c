"""The hyperparameter sweep widget of notebook 01: try to tune your way out of the plateau.

Each click trains the story's SAE (transposed init, emulated 2.2.1 device) with the chosen
learning rate, k, hidden size and schedule, and overlays its loss curve on the earlier ones.
The table beside it keeps one row per run, including whether the encoder moved at all: the clue.
"""

from __future__ import annotations

import ipywidgets as widgets

from course.story.plateau import Run, loss_figure, run
from course.story.training import SCHEDULES
from course.ui import Drawing, Panel, html_table

HIDDEN_SIZES = (768, 1536, 3072)
KS = (8, 16, 32, 64)


def _label(lr: float, k: int, hidden: int, schedule: str) -> str:
    return f"lr={lr:.0e} k={k} hidden={hidden} {schedule}"


def sweep_widget(first: Run | None = None, steps: int = 200) -> Panel:
    """A Panel that trains one configuration per click and overlays every run's loss."""
    runs: dict[str, Run] = {}
    if first is not None:
        runs[_label(3e-3, 32, 1536, "constant")] = first

    def draw(lr: float, k: int, hidden: int, schedule: str) -> Drawing:
        label = _label(lr, k, hidden, schedule)
        if label not in runs:
            runs[label] = run(lr=lr, k=k, n_features=hidden, schedule=schedule, steps=steps)
        rows = [
            {
                "run": name,
                "final loss": f"{r.history.final_loss:.3f}",
                "encoder moved": "no" if r.history.frozen["encoder.weight"] else "yes",
            }
            for name, r in runs.items()
        ]
        fig = loss_figure(runs, title="Every setting plateaus")
        return Drawing(fig, html_table(rows, colours={"no": "#ffd6d6"}))

    controls = {
        "lr": widgets.FloatLogSlider(
            value=3e-3, base=10, min=-4, max=-2, step=0.25, description="lr", readout_format=".0e"
        ),
        "k": widgets.Dropdown(options=KS, value=32, description="k"),
        "hidden": widgets.Dropdown(options=HIDDEN_SIZES, value=1536, description="hidden"),
        "schedule": widgets.Dropdown(options=SCHEDULES, value="constant", description="schedule"),
    }
    return Panel(
        controls, draw, title="Hyperparameter sweep (emulated MPS, torch 2.2.1)", button="Train"
    )
