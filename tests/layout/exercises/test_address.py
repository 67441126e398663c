"""04.address: each wrong rule in the corpus is told its own cause."""

from __future__ import annotations

import pytest

from course.exercises import check
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "04.address": (
        "whatever `offset` is",  # no offset
        "another dim's stride",  # strides paired with the mirrored dims
        "the last dim to be 1 slot",  # assumes a row-major last dim
        "up to 3 dims, but not with 4",  # three dims named one by one
        "whatever `stride` is",  # x's strides (6, 1) written in
        "asked torch",  # as_strided over an arange, then read the value
        "course's own course.layout.calculator",  # Layout.storage_index
        "up to 2 dims, but not with 3",  # the last two dims only (rows and columns)
        "whatever `offset` is",  # a 0-dim tensor put at slot 0
        "the last dim to be 1 slot",  # stride 0 (an expanded dim) taken as 1
        "asked numpy",  # np.dot(index, stride)
        "as an int",  # float(...)
        "it counts bytes (4 per element)",  # 4 * (offset + ...): a float32's bytes
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_reference_is_right_on_scalars_and_five_dims():
    verdict = check(
        "04.address",
        lambda index, stride, offset: (
            offset + sum(i * s for i, s in zip(index, stride, strict=True))
        ),
    )
    assert verdict.passed and "0 to 5 dims" in verdict.message


def test_a_crash_is_shown_on_the_smallest_layout_it_happens_on():
    verdict = check("04.address", lambda index, stride, offset: offset + index[0] * stride[0])
    assert not verdict.passed
    assert "0-dim tensor" in verdict.message and "raised IndexError" in verdict.yours


def test_a_course_helper_passed_itself_is_recognised():
    from course.layout.calculator import Layout

    verdict = check("04.address", Layout.storage_index)
    assert "course's own course.layout.calculator.Layout.storage_index" in verdict.message


def test_arithmetic_in_torch_is_still_asking_torch():
    import torch

    def address(index, stride, offset):
        return offset + int((torch.tensor(index) * torch.tensor(stride)).sum())

    assert "asked torch (torch.tensor" in check("04.address", address).message
