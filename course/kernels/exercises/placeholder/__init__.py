"""Notebook 06's exercises and predictions: kernels that must not lose their writes.

The learner predicts where a lost write goes (`predictions`), writes the test that would have
caught it (`catching`: tried on `hidden_kernels`, each broken in a way one kind of careless test
cannot see), fixes the broken addcmul_ kernel (`fix`) and designs the bug away with an output
placeholder (`redesign`). Kernels run in a private emulated backend on hidden outputs
(`outputs`) under the device's contract (course.kernels.contract: the graph takes contiguous
buffers only); results are read through the output's storage and compared bit for bit.
Importing this package registers them all.
"""

from course.kernels.exercises.placeholder import catching, fix, predictions, redesign

__all__ = ["catching", "fix", "predictions", "redesign"]
