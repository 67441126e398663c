"""04.make_contiguous: hidden inputs of every layout, rank and dtype; each wrong answer told why."""

from __future__ import annotations

import torch

from course.layout.exercises.copies import INPUTS
from tests.corpus import corpus_tests
from tests.layout.exercises.corpus_copies import CORPORA

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_hidden_inputs_vary_layout_rank_and_dtype():
    tensors = [make() for make in INPUTS.values()]
    assert sum(not t.is_contiguous() for t in tensors) == 7
    assert any(t.dim() == 1 and not t.is_contiguous() for t in tensors)
    assert {t.dim() for t in tensors} == {0, 1, 2, 3, 4}
    assert {t.dtype for t in tensors} >= {torch.float32, torch.int64, torch.float16, torch.bool}
    assert any(t.storage_offset() and t.is_contiguous() for t in tensors)
