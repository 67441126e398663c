"""Notebook 09's prediction: which of the three fixes reaches the lowest loss.

A learner who finished notebooks 06 and 08 knows that each fix unfreezes the encoder; what the
experiment measures is how far each gets. `09.which_fixes` trains the three fixes briefly on a
small SAE and compares their final losses bit for bit.
"""

from __future__ import annotations

from course.casefile.fixes import SCENARIOS, run_scenario
from course.exercises import Prediction, register_prediction

FIXES = list(SCENARIOS)[1:]  # the broken run first, then one change at a time
SAME = "all three the same, to the last bit"
FIX_CHOICES = ("fix 1 (contiguous init)", "fix 2 (torch 2.4)", "fix 3 (macOS 15)", SAME)


def _lowest_loss() -> str:
    """Train the three fixes briefly (a small SAE) and name the one with the lowest final loss,
    or SAME when their final losses are equal bit for bit."""
    small = {"steps": 10, "batch_size": 32, "n_features": 128, "progress": None}
    losses = [run_scenario(label, **small).history.final_loss for label in FIXES]
    if len(set(losses)) == 1:
        return SAME
    return FIX_CHOICES[losses.index(min(losses))]


register_prediction(
    Prediction(
        "09.which_fixes",
        "Each fix changes one thing from the broken run. After the same steps, which of them "
        "reaches the lowest loss?",
        FIX_CHOICES,
        _lowest_loss,
        "Once no write is lost, the three runs compute the same numbers: a contiguous parameter "
        "holds the same values as a transposed one, and a kernel that copies its result back "
        "leaves the same result as one that needs no copy. So their losses agree to the last "
        "bit; the fixes differ in what they cost and where they apply (fix 1 works on any torch "
        "and macOS), not in how far training gets.",
        answer_words=(
            "to the last bit",
            "on top of each other",
            "does not change a single number",
            "the same numbers",
            "same loss",
        ),
    )
)
