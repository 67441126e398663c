"""Notebook 03's exercises and predictions: Adam by hand, each op alone, versions, two bugs.

One module per part of the lesson; importing this package registers them all. Each checker
runs the learner's code on hidden problems and profiles and watches how it ran
(`common`): a ready-made answer, a copy instead of the tensor asked about, a profile ignored
or a set written down is named before any conclusion is compared.
"""

from course.adam.exercises import isolating, masking, stepping, versions

__all__ = ["isolating", "masking", "stepping", "versions"]
