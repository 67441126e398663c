"""Notebook 07's exercises and predictions: compiled kernels that must follow every layout.

Importing this package registers them all. The learner predicts the naive C++ kernel's scramble
and what a row of a transposed matrix costs in cache lines (`predictions`), writes a compiled
kernel that is right on every layout (`write_kernel`) and covers a matrix with tiles (`tiles`).
"""

from course.kernels.exercises.compiled import predictions, tiles, write_kernel

__all__ = ["predictions", "tiles", "write_kernel"]
