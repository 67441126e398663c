"""Notebook 07's exercises and prediction: compiled kernels that must follow every layout.

One module per exercise; importing this package registers them all. The learner predicts the
naive C++ kernel's scramble on paper (`scramble`), writes a compiled kernel that is right on
every layout (`write_kernel`), covers a matrix with tiles (`tiles`) and predicts what a row of a
transposed matrix costs in cache lines (`predictions`).
"""

from course.kernels.exercises.compiled import predictions, scramble, tiles, write_kernel

__all__ = ["predictions", "scramble", "tiles", "write_kernel"]
