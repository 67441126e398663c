"""Case closed: the story's SAE fixed three ways, each beside the broken run.

The bug needs two things at once: a non-contiguous parameter and a kernel that drops writes to
non-contiguous outputs. Remove either and Adam works again, so there are three fixes: make the
parameter contiguous at init, upgrade torch (the emulated 2.4 profile fixes addcmul_/addcdiv_),
or upgrade macOS (the macOS 15 profile needs no temporaries at all). Each scenario is one call,
so a notebook can train them one cell at a time.
"""

from __future__ import annotations

from course import emps
from course.errors import require_choice
from course.model.runs import Run, run
from course.tables import text_table

FIX_STEPS = 150  # notebook 01 trains 200; 150 keeps each run under 10 s on two cores, and the
# broken and fixed runs are far apart well before that
# label -> (profile, init): the broken run first, then one change at a time
SCENARIOS = {
    "broken (2.2.1, transposed init)": (emps.TORCH_2_2_1, "transposed"),
    "fix 1: contiguous init": (emps.TORCH_2_2_1, "contiguous"),
    "fix 2: torch 2.4": (emps.TORCH_2_4, "transposed"),
    "fix 3: macOS 15": (emps.MACOS15, "transposed"),
}


def run_scenario(label: str, **train_kwargs) -> Run:
    """Train one scenario: the data and seed of notebook 01, FIX_STEPS steps unless told."""
    require_choice("scenario", label, SCENARIOS)
    profile, init = SCENARIOS[label]
    return run(profile, init, **{"steps": FIX_STEPS, **train_kwargs})


def outcome_rows(runs: dict[str, Run]) -> list[dict[str, object]]:
    """Per run: did the encoder move, did Adam's second moment grow, did the loss beat broken,
    and is its final loss fix 1's to the last bit (the second run's: 09.which_fixes asks)?"""
    losses = [one.history.final_loss for one in runs.values()]
    baseline, fix_1 = losses[0], losses[1:2]
    rows = []
    for label, one in runs.items():
        s = one.summary()
        rows.append(
            {
                "run": label,
                "encoder frozen": s["encoder_frozen"],
                "encoder exp_avg_sq > 0": (s["encoder_max_exp_avg_sq"] or 0) > 0,
                "final loss < broken's": s["final_loss"] < baseline,
                "final loss = fix 1's": [s["final_loss"]] == fix_1,
            }
        )
    return rows


def outcome_table(runs: dict[str, Run]) -> str:
    """The outcome rows as fixed-width text (deterministic: booleans only)."""
    return text_table(outcome_rows(runs))
