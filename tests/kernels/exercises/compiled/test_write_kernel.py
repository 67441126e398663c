"""07.write_kernel: the learner's C++ kernel on every layout and value, and its solution."""

from __future__ import annotations

import pytest

from course.exercises import instructor_mode, solution
from course.kernels.cpp import learner
from tests.corpus import corpus_tests
from tests.kernels.exercises.compiled.corpus_write_kernel import CORPORA, REFERENCE_KERNEL


@pytest.fixture(scope="module")
def kernels_run_together():
    """The corpus's kernels checked in one child process: one torch import, not one each."""
    (corpus,) = CORPORA
    makers = [make for make, _ in corpus.wrong.values()] + list(corpus.right.values())
    learner.run_together([make() for make in makers])


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA, "kernels_run_together", marks=(pytest.mark.compile,))


def test_the_solution_shows_the_kernel_itself():
    instructor_mode(True)
    try:
        shown = solution("07.write_kernel")
    finally:
        instructor_mode(False)
    assert 'extern "C" void my_addcmul_' in shown and "lambda" not in shown
    assert REFERENCE_KERNEL in shown
