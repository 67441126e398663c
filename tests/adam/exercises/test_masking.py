"""03.which_explodes: a prediction (committed once), revealed from the measured switchboard."""

from __future__ import annotations

from course.adam import switchboard
from course.adam.exercises import masking
from course.exercises import all_exercises, all_predictions


def test_the_pick_is_a_prediction_not_a_check():
    assert "03.which_explodes" in all_predictions() and "03.which_explodes" not in all_exercises()
    choices = all_predictions()["03.which_explodes"].choices
    assert choices == tuple(case.label for case in switchboard.CASES)


def test_the_outcome_is_the_one_case_the_switchboard_measures_exploding():
    assert masking.exploding_case() == "addcmul_ only"
    verdicts = {o.case.label: o.verdict for o in switchboard.outcomes()}
    assert verdicts == {
        "no bug": "trains",
        "addcmul_ only": "explodes",
        "addcdiv_ only": "frozen",
        "both": "frozen",
    }
