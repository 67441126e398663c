"""07.write_kernel: the learner's C++ kernel on every layout and value, and its solution."""

from __future__ import annotations

import pytest

from course.exercises import get, instructor_mode, solution
from course.kernels.cpp import learner
from course.kernels.exercises.compiled import write_kernel
from tests.corpus import assert_told_its_cause, corpus_cases

KERNEL_CAUSES = {
    "07.write_kernel": (
        "as if a and b were laid out like out",  # flat, with offsets
        "as if a and b were laid out like out",  # the output's strides for all three
        "an output with a storage offset",  # no offsets
        "inputs with a storage offset",  # the output's offset only
        "a permuted 3-d output",  # two dims only
        "a 4-d output",  # up to three dims
        "used value 0.5",  # value hard-coded
        "ignored `value`",  # value ignored
        "overwrote out",  # = instead of +=
        "wrote into an input",  # a.data[x] += ...
        "a transposed a and a b with a storage offset",  # b read through a's strides
        "a transposed a and a b with a storage offset",  # b read at a's index
        "a transposed a and a b with a storage offset",  # a's and b's offsets swapped
        "must be copied back",  # results left in a temporary
        "into the wrong elements of out",  # the temporary copied back in memory order
        "does not reach every index",  # sizes[0] for both dims
        "a 5-d output",  # up to four dims, hard-coded
        "used value 0.25",  # value * value
        "a 6-d output",  # five nested loops, as many dims as the notebook names
        "laid out alike that is right only when the elements have no gaps",  # naive if alike
        "an empty (4, 0) output",  # do { ... } while (++i < n): one body on no elements
        "left a 0-d output unchanged",  # an inner loop over sizes[ndim - 1]
        "an expanded (stride 0) input",  # stride[ndim - 1] == 1 taken for contiguous
        "keep the skeleton's signature",  # double value
    ),
}


@pytest.fixture(scope="module")
def kernels_run_together():
    """The wrong kernels checked in one child process: one torch import, not one per kernel."""
    learner.run_together([answer() for answer in get("07.write_kernel").wrong_answers])


@pytest.mark.compile
@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(KERNEL_CAUSES))
def test_each_wrong_kernel_is_told_its_cause(kernels_run_together, name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_solution_shows_the_kernel_itself():
    instructor_mode(True)
    try:
        shown = solution("07.write_kernel")
    finally:
        instructor_mode(False)
    assert 'extern "C" void my_addcmul_' in shown and "lambda" not in shown
    assert write_kernel.REFERENCE_KERNEL in shown
