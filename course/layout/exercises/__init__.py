"""Notebook 04's exercises and predictions: the learner builds the layout calculator's core.

Each rule the learner writes (an element's address, the layouts after .T, a step slice and a
permute, torch's contiguity rule) is run on a few hundred random layouts of 0 to 5 dims
(course.layout.oracle) with real torch as the oracle, watched so that asking torch, numpy or the
course's own calculator is named instead of passing (`common`). A wrong rule is told its cause,
read from the pattern of its mismatches. make_contiguous runs on hidden inputs of every layout,
rank and dtype. One module per exercise; importing this package registers them all.
"""

from course.layout.exercises import address, contiguity, copies, predictions, views

__all__ = ["address", "contiguity", "copies", "predictions", "views"]
