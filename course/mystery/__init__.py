"""Your own case: an unseen bug, planted by a seed, for the learner to find alone.

`open_case(seed)` picks one of the pool's cases (course.mystery.cases) and plants its bug in the
emulated device (course.mystery.bugs); the case's scenario (course.mystery.scenarios, models from
course.mystery.models) shows the symptom its brief describes. The learner answers with a minimal
repro, the culprit (op and layout condition) and a fix; `Case.check_*` judge them
(course.mystery.case). Used by notebook 10 and by `python -m course mystery [--seed N]`.
"""

from course.mystery.bugs import LAYOUT_CONDITIONS
from course.mystery.case import OPS, Answer, Case, open_case
from course.mystery.cases import POOL
from course.mystery.cli import cli

__all__ = ["LAYOUT_CONDITIONS", "OPS", "POOL", "Answer", "Case", "cli", "open_case"]
