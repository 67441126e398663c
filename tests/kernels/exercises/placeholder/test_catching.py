"""06.kernel_test: a test that tells every hidden kernel right from broken, and why one fails."""

from __future__ import annotations

import torch

from course.exercises import check
from course.kernels import placeholder_lab
from course.kernels.exercises.placeholder import catching
from tests.corpus import corpus_tests
from tests.kernels.exercises.placeholder.corpus_catching import CORPORA, kernel_test

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_macos15_only_is_told_about_strided_buffers():
    def breaks(kernel):
        output = placeholder_lab.layouts()["transposed"]
        result, expected, _ = placeholder_lab.run_addcmul(kernel, output, profile="macos15")
        return not torch.equal(result, expected)

    verdict = check("06.kernel_test", breaks)
    assert not verdict.passed and "strided buffers (macOS 15)" in verdict.message


def test_a_test_must_return_a_bool_and_its_errors_are_named():
    for not_a_bool in ("yes", 3, torch.tensor([True, False])):
        verdict = check("06.kernel_test", lambda k, answer=not_a_bool: answer)
        assert "return True (it breaks) or False" in verdict.message

    def crashes(kernel):
        raise KeyError("oops")

    verdict = check("06.kernel_test", crashes)
    assert "raised KeyError" in verdict.message and "2.2.1's broken kernel" in verdict.message


def test_every_hidden_kernel_is_what_it_claims():
    """The reference's experiment agrees with each hidden kernel's verdict, on its own."""
    reference = kernel_test()
    for hidden in catching.HIDDEN_KERNELS:
        assert reference(hidden.kernel) is hidden.breaks, hidden.does


def test_the_hidden_kernels_are_new_functions_each_time():
    runs: list = []
    watched = catching.watched(catching.HIDDEN_KERNELS[0].kernel, runs)
    assert watched.__name__ != "write_through_placeholder"
    placeholder_lab.run_addcmul(watched, placeholder_lab.layouts()["transposed"])
    assert len(runs) == 1 and runs[0].transpose and runs[0].values == (0.5,)
