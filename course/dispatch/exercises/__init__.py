"""Notebook 05's exercises and predictions, checked against the live tables of the installed torch.

The learner builds two readers of the dispatcher's machinery (which C++ kernel the registry names
for an op on a backend; which dispatch keys run a kernel for a call) and one operator of their
own. Each checker runs the learner's function on variants the notebook never shows and compares
with the course's own readers of this process's registry and tables, so the answers follow the
torch that is installed. One module per exercise; importing this package registers them all.
"""

from course.dispatch.exercises import custom_op, kernel_for, keys_that_run, predictions
from course.dispatch.exercises.predictions import override_experiment

__all__ = ["custom_op", "kernel_for", "keys_that_run", "override_experiment", "predictions"]
