"""Notebook 02's exercises and predictions: the learner's experiments, run on hidden benches.

Each checker calls the learner's function on benches they never see (the story's profile, a
later one, the CPU, a contiguous init, other seeds and sizes) and compares its conclusion with
the reference experiment's on the same bench, so a function that remembers the story instead
of measuring the device gets an answer wrong somewhere. The bench's step log shows how the
experiment ran, and the runs the text builds on are checked as benches (`controls`). One module
per part of the lesson; importing this package registers them all.
"""

from course.isolation.exercises import (
    adam_state,
    controls,
    differences,
    herrings,
    measuring,
    moves,
    stepping,
)

__all__ = ["adam_state", "controls", "differences", "herrings", "measuring", "moves", "stepping"]
