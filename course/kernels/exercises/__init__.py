"""Notebooks 06-07's exercises and predictions, one module per notebook.

`placeholder` (06): a test that catches a lost write, the fixed addcmul_ kernel and an output
placeholder, on hidden outputs under the device's contract. `compiled` (07): the naive C++
kernel's scramble, a compiled kernel right on every layout, and a tiled loop. Importing this
package registers them all.
"""

from course.kernels.exercises import compiled, placeholder

__all__ = ["compiled", "placeholder"]
