"""The per-op bug switchboard widget: break addcmul_ and addcdiv_ independently, watch training.

The cases, their training runs and their table and figure live in
`course.adam.switchboard_cases`, which imports no widget stack; they are named here too, where
notebook 03 and the checker of 03.which_explodes find them (`switchboard.outcomes()`).
`switchboard()` imports ipywidgets when it is called, so importing this module never needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from course.adam.switchboard_cases import (
    CASES,
    MAX_CASE_STEPS,
    RUN,
    Case,
    Outcome,
    find_case,
    is_cached,
    outcome_figure,
    outcome_table,
    outcomes,
    run_case,
)

if TYPE_CHECKING:
    from course.ui import Panel

__all__ = [
    "CASES",
    "Case",
    "Outcome",
    "find_case",
    "outcome_figure",
    "outcome_table",
    "outcomes",
    "run_case",
    "switchboard",
]


def switchboard() -> Panel:
    """The widget: two toggles and a Run button; the chosen case beside every case run so far."""
    import ipywidgets as widgets

    from course.ui import Drawing, Panel, number_slider

    controls = {
        "addcmul_broken": widgets.Checkbox(value=True, description="addcmul_ drops writes"),
        "addcdiv_broken": widgets.Checkbox(value=True, description="addcdiv_ drops writes"),
        "steps": number_slider("steps", RUN["steps"], 1, MAX_CASE_STEPS),
    }

    def draw(addcmul_broken: bool, addcdiv_broken: bool, steps: int, panel: Panel) -> Drawing:
        case = find_case(addcmul_broken, addcdiv_broken)
        if is_cached(case, steps):
            chosen = run_case(case, steps)
        else:
            with panel.working(f"Training '{case.label}' for {steps} steps ..."):
                chosen = run_case(case, steps, progress=panel.progress)
        shown = [run_case(c, steps) for c in CASES if is_cached(c, steps)]
        note = (
            f"<p><b>{chosen.case.label}</b> {chosen.verdict}: {chosen.case.why}.</p>"
            f"<p>{len(shown)} of 4 cases run at {steps} steps; flip the toggles and press Run "
            "to fill in the rest.</p>"
        )
        return Drawing(outcome_figure(shown, chosen.case.label), note + outcome_table(shown))

    return Panel(controls, draw, title="Per-op bug switchboard (emulated MPS)", button="Run")
