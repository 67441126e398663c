"""The importable half of the course: everything the notebooks compute lives here.

Notebooks narrate; these modules do the work, so every experiment, widget and checker can be
tested from pytest exactly as a learner runs it. `course.catalog` lists the lessons and the
modules each one uses.
"""

__version__ = "0.1.0"
