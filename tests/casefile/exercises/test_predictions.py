"""09.which_fixes runs its experiment: the three fixes trained briefly on a small SAE."""

from __future__ import annotations

from course.casefile.exercises.predictions import SAME
from course.exercises.registry import prediction


def test_which_fixes_runs_the_experiment():
    assert prediction("09.which_fixes").outcome() == SAME
