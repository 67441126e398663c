"""Notebook 09's prediction: which of the three fixes unfreeze the encoder.

`09.which_fixes` is answered by training every scenario briefly on a small SAE.
"""

from __future__ import annotations

from course.casefile.fixes import SCENARIOS, run_scenario
from course.exercises import Prediction, register_prediction

FIX_CHOICES = ("none", "only fix 1", "fix 1 and fix 2", "all three")


def _which_fixes() -> str:
    """Train every scenario briefly (a small SAE) and name the fixes that unfreeze the encoder."""
    small = {"steps": 10, "batch_size": 32, "n_features": 128, "progress": None}
    moved = [
        label
        for label in list(SCENARIOS)[1:]
        if not run_scenario(label, **small).summary()["encoder_frozen"]
    ]
    return {0: "none", 3: "all three"}.get(
        len(moved), "only fix 1" if moved == [list(SCENARIOS)[1]] else "fix 1 and fix 2"
    )


register_prediction(
    Prediction(
        "09.which_fixes",
        "Each fix changes one thing from the broken run. Which of them unfreeze the encoder?",
        FIX_CHOICES,
        _which_fixes,
        "The bug needs both a non-contiguous output and a kernel that drops writes to it. "
        "Fix 1 removes the first (Adam's state is contiguous too: zeros_like copies the layout), "
        "fix 2 the second for addcmul_/addcdiv_, and fix 3 makes the copies unnecessary: "
        "each is enough on its own.",
        answer_words=("either one", "each is enough", "all three fix"),
    )
)
