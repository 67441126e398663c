"""The three fixes: each removes one of the bug's two conditions, and the encoder trains."""

from __future__ import annotations

import pytest

from course.casefile.fixes import SCENARIOS, outcome_rows, outcome_table, run_scenario
from course.errors import CourseError


def test_each_fix_unfreezes_the_encoder():
    small = {"steps": 20, "batch_size": 32, "n_features": 256, "progress": None}
    runs = {label: run_scenario(label, **small) for label in SCENARIOS}
    rows = outcome_rows(runs)
    assert [row["encoder frozen"] for row in rows] == [True, False, False, False]
    assert [row["encoder exp_avg_sq > 0"] for row in rows] == [False, True, True, True]
    assert [row["final loss = fix 1's"] for row in rows] == [False, True, True, True]
    table = outcome_table(runs).splitlines()
    assert table[0].startswith("run") and table[-1].startswith("fix 3: macOS 15")


def test_an_unknown_scenario_is_a_course_error():
    with pytest.raises(CourseError, match="fix 4"):
        run_scenario("fix 4: reboot")
