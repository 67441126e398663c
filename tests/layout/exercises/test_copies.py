"""04.make_contiguous: hidden inputs of every layout, rank and dtype; each wrong answer told why."""

from __future__ import annotations

import pytest
import torch

from course.exercises import check
from course.layout.exercises.copies import INPUTS
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "04.make_contiguous": (
        "a copy that keeps the input's layout",  # clone()
        "a wasted copy",  # clone(memory_format=torch.contiguous_format)
        "a view of the input",  # reshape to the same shape
        "view() never copies",  # view(-1).view(shape)
        "keeps the dtype",  # torch.tensor(x.tolist()): float64 becomes float32
        "you returned the input itself",  # "contiguous" when the last stride is 1
        "only relabels memory",  # as_strided with row-major strides
        "changed its",  # x.data = x.contiguous()
        "a size-1 dim's stride never counts",  # exact row-major strides, else a forced copy
        "its number of dims",  # only 2-d inputs made contiguous
        "x.to(memory_format=...) returns its input",
        "keeps the dtype",  # torch.empty(x.shape).copy_(x): always float32
        "you returned the input itself",  # 0-d and 1-d inputs left as they are
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_hidden_inputs_vary_layout_rank_and_dtype():
    tensors = [case.make() for case in INPUTS]
    assert sum(not t.is_contiguous() for t in tensors) == 7
    assert any(t.dim() == 1 and not t.is_contiguous() for t in tensors)
    assert {t.dim() for t in tensors} == {0, 1, 2, 3, 4}
    assert {t.dtype for t in tensors} >= {torch.float32, torch.int64, torch.float16, torch.bool}
    assert any(t.storage_offset() and t.is_contiguous() for t in tensors)


def test_a_function_that_zeroes_its_input_is_told_it_changed_it():
    assert "changed its transposed" in check("04.make_contiguous", torch.Tensor.zero_).message


def test_copying_only_when_needed_passes_however_it_is_written():
    def make_contiguous(x):
        return x if x.is_contiguous() else x.clone(memory_format=torch.contiguous_format)

    assert check("04.make_contiguous", make_contiguous).passed
