"""06.kernel_test: a test that tells every hidden kernel right from broken, and why one fails."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course.exercises import check
from course.kernels import placeholder_lab
from course.kernels.exercises.placeholder import kernel_test
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "06.kernel_test": (
        "only ran it on contiguous outputs",  # contiguous outputs only
        "never ran the kernel",  # judged by the kernel's name
        "other than a 2-d transpose",  # contiguous and transposed only
        "more than 2 dims",  # matrices only
        "storage offset",  # no output with a storage offset
        "always used value=1",  # value=1 throughout
        "lost_write flag",  # reads the recorder instead of the values
        "tolerance",  # allclose(rtol=0.05)
        "sorted values",  # compares sorted values
        "the first rows",  # compares the first row
        "NaN",  # (diff > 0).any(): exact, but NaN > 0 is False
        "'did it change?'",  # "unchanged" taken for "broken", "changed" for "right"
        "never ran the kernel",  # always True
        "no tolerance sees a last-bit error",  # allclose with its default tolerance
        "no tolerance sees a last-bit error",  # torch.testing.assert_close
        "no tolerance sees a last-bit error",  # max |difference| <= 1e-6
        "cannot see one lost element",  # the first column only
        "cannot see one lost element",  # the last row only
        "cannot see one lost element",  # every other element
        "one element cannot see a scramble",  # the first element only
        "value=0",  # addcmul_ with value=0 adds nothing: a lost write is invisible
        "compare the output after the call with torch's result",  # shape and dtype only
        "a temporary (the recorder counts them)",  # "made a temporary" taken for broken
        "a summary of the output cannot see",  # compares sums (a swap keeps them bit for bit)
        "a summary of the output cannot see",  # compares means and norms
        "gaps between its elements",  # every layout but step-sliced
        "a summary of each column cannot see",  # compares the column sums
        "a summary of each row cannot see",  # compares the row means, in float64
        "sums along every dim are still a summary",  # compares the sums along every dim
        "a flag that the next output overwrites",  # only the last output decides
        "all() instead of any()",  # broken only when wrong on every output
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_a_test_built_from_its_own_views_passes():
    """Layouts made by hand (not placeholder_lab.layouts) and exact comparison are as good."""

    def breaks(kernel):
        base = torch.randn(8, 12, generator=torch.Generator().manual_seed(5))
        outputs = [base[:4, :6], base[:6, :4].t(), base[:4, ::2], base[3:7, 1:7]]
        outputs.append(torch.randn(4, 2, 3).permute(1, 2, 0))
        for output in outputs:
            result, expected, _ = placeholder_lab.run_addcmul(kernel, output, value=-2.0)
            if not torch.equal(result, expected):
                return True
        return False

    assert check("06.kernel_test", breaks).passed


def _every_layout() -> list[torch.Tensor]:
    return [
        *placeholder_lab.layouts(
            (4, 6), ("contiguous", "transposed", "step-sliced", "storage-offset")
        ).values(),
        *placeholder_lab.layouts((2, 3, 4), ("permuted",)).values(),
    ]


def _same_bits(result: torch.Tensor, expected: torch.Tensor) -> bool:
    return torch.equal(result.view(torch.int32), expected.view(torch.int32))


def _same_or_both_nan(result: torch.Tensor, expected: torch.Tensor) -> bool:
    return bool(((result == expected) | (result.isnan() & expected.isnan())).all())


@pytest.mark.parametrize(
    "same",
    [
        torch.equal,
        lambda r, e: not (r != e).any(),
        _same_bits,
        _same_or_both_nan,
        lambda r, e: np.array_equal(r.numpy(), e.numpy()),
        lambda r, e: r.flatten().tolist() == e.flatten().tolist(),
    ],
    ids=["equal", "not-any-differs", "int32-bits", "nan-aware", "numpy", "lists"],
)
def test_every_bit_for_bit_comparison_passes(same):
    def breaks(kernel):
        return any(
            not same(*placeholder_lab.run_addcmul(kernel, output, value=-1.5)[:2])
            for output in _every_layout()
        )

    assert check("06.kernel_test", breaks).passed


@pytest.mark.parametrize(
    "verdict",
    [
        lambda differs: torch.stack(differs).any(),  # a one-element bool tensor
        lambda differs: np.any([bool(d) for d in differs]),  # numpy's bool
    ],
    ids=["tensor", "numpy"],
)
def test_a_bool_tensor_or_numpy_bool_is_an_answer(verdict):
    def breaks(kernel):
        results = [placeholder_lab.run_addcmul(kernel, output, 0.5) for output in _every_layout()]
        return verdict([(result != expected).any() for result, expected, _ in results])

    assert check("06.kernel_test", breaks).passed


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
    reference = kernel_test._kernel_test_reference()
    for hidden in kernel_test.HIDDEN_KERNELS:
        assert reference(hidden.kernel) is hidden.breaks, hidden.does


def test_the_hidden_kernels_are_new_functions_each_time():
    runs: list = []
    watched = kernel_test._watched(kernel_test.HIDDEN_KERNELS[0].kernel, runs)
    assert watched.__name__ != "write_through_placeholder"
    placeholder_lab.run_addcmul(watched, placeholder_lab.layouts()["transposed"])
    assert len(runs) == 1 and runs[0].transpose and runs[0].values == (0.5,)
