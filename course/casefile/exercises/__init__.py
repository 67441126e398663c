"""Notebook 09's exercises and prediction: tie the weights, find the suspects in the model and in
its optimizer's state, each checked on hidden models; feedback names what is true of the case an
answer missed.

One module per exercise; importing this package registers them all. The hidden models the
checkers share, and the course's own checks an answer may not call, live in `common`.
"""

from course.casefile.exercises import predictions, state_suspects, suspects, tie_weights

__all__ = ["predictions", "state_suspects", "suspects", "tie_weights"]
