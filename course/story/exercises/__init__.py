"""Notebook 01's exercises and prediction, checked by running the learner's work elsewhere.

The learner writes the measurements of the story's first step: how low the loss could go (so
"9" is a plateau, not a good model), a snapshot of the weights that training cannot change,
and the check of which weights never moved. Each function is run on data, models and training
runs they never see (other seeds and sizes, a later profile, the CPU, hand-made edits that only
an exact comparison notices), and the two values the text then builds on, the floor and the
frozen names of the story's run, are checked as well. One module per part of the lesson;
importing this package registers them all.
"""

from course.story.exercises import floor, weights

__all__ = ["floor", "weights"]
