"""Notebook 08's exercises and prediction, checked by running the learner's answer on hidden cases.

One module per exercise; importing this package registers them all. Each checker stops at the
first hidden case the answer gets wrong and says what is true of that case, so the feedback
names the shortcut (a NaN compared with ==, a tolerance that hides a 3% error, a set that does
not follow the backend) without printing the answer. The two judges share `common`.
"""

from course.audit.exercises import lost_writes, predictions, random_verdict, verdict

__all__ = ["lost_writes", "predictions", "random_verdict", "verdict"]
