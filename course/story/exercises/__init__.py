"""Notebook 01's exercises and prediction, checked by running the learner's work elsewhere.

The story's first measurements: how low the loss could go (so "9" is a plateau, not a good
model), a snapshot of the weights, and which weights never moved, each run on data, models and
runs the learner never sees; then the floor and frozen names the text builds on. Importing this
package registers them all.
"""

from course.story.exercises import floor, frozen, frozen_names, snapshot

__all__ = ["floor", "frozen", "frozen_names", "snapshot"]
