"""Your own case: an unseen bug, generated from a seed, for the learner to find alone.

`open_case(seed)` generates a case (course.mystery.generate): a user's model and training run
(course.mystery.families, models, scenarios) on an emulated device with one planted kernel bug
(course.mystery.bugs: conditions, effects), and a brief measured from that run
(course.mystery.symptoms). The learner answers with a minimal repro, the culprit (op and
condition) and a fix; `Case.check_*` judge them (course.mystery.case, answers, guard). Used by
notebook 10 and by `python -m course mystery [--seed N | --deal N]`.
"""

from course.mystery import guard
from course.mystery.answers import OPS
from course.mystery.case import Answer, Case, hint, open_case
from course.mystery.cli import cli
from course.mystery.conditions import CONDITIONS

__all__ = ["CONDITIONS", "OPS", "Answer", "Case", "cli", "hint", "open_case"]

guard.pristine()  # torch and the device as they are once the package is loaded: see guard
