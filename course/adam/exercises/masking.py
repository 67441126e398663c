"""03.which_explodes: two bugs, one masking the other, as a prediction the switchboard answers.

Which of the switchboard's four cases explodes is a pick from four labels: checked like an
exercise, any guess would pass after a few tries. So it is a prediction, committed once before
the switchboard runs, and the reveal reads the answer from the switchboard's own measured
outcomes (course.adam.switchboard), never from a stored label.
"""

from __future__ import annotations

from course.adam.switchboard import CASES, outcomes
from course.errors import CourseError
from course.exercises import Prediction, register_prediction


def exploding_case() -> str:
    """The label of the one case whose encoder update explodes, measured by training it."""
    exploding = [o.case.label for o in outcomes() if o.verdict == "explodes"]
    if len(exploding) != 1:
        raise CourseError(
            f"the switchboard measured {len(exploding)} exploding cases ({exploding}); the "
            "prediction expects exactly one: has the model or the emulated device changed?"
        )
    return exploding[0]


register_prediction(
    Prediction(
        "03.which_explodes",
        "Of the switchboard's four cases, which one makes the encoder's update explode?",
        tuple(case.label for case in CASES),
        exploding_case,
        "addcmul_ only. With addcmul_ broken alone, exp_avg_sq never leaves 0, so the step is "
        "lr * m_hat / (sqrt(0) + eps), with m_hat = m / (1 - beta1) = 10 m at step 1: "
        "lr * m * 1e9, and a working addcdiv_ delivers it: "
        "thousands in one step, then inf and NaN. With addcdiv_ broken, alone or with "
        "addcmul_, the update is computed and dropped: frozen. Both together is the story: "
        "frozen with exp_avg_sq = 0. The second bug masked the first.",
        answer_words=("addcmul_ alone", "only addcmul_"),
    )
)
