"""09.tie_weights: each known wrong tie fails with its cause; copies that own their memory, written
other ways, pass."""

from __future__ import annotations

import torch

from course import emps
from course.casefile.exercises import tie_weights
from course.exercises import check
from tests.casefile.exercises.corpus_tie_weights import CORPORA, empty_like_the_view
from tests.corpus import corpus_tests

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_a_variable_named_t_is_not_blamed_as_t():
    def tie(decoder_weight):
        t = decoder_weight.T
        return t

    message = check("09.tie_weights", tie).message
    assert "`.T` returns a view" in message and "t()" not in message


def test_the_empty_like_feedback_does_not_blame_clone():
    message = check("09.tie_weights", empty_like_the_view).message
    assert "empty_like()" in message and "clone()" not in message


def test_the_dtype_feedback_names_float64_only_for_float64():
    message = check("09.tie_weights", lambda w: w.T.contiguous().half()).message
    assert "a weight keeps its dtype" in message and "float64" not in message


def test_a_one_row_decoders_transpose_is_contiguous_already():
    one_row = torch.zeros(1, 6)  # a probe's weight: its transpose is contiguous, so no copy
    assert one_row.T.is_contiguous() and one_row.T.contiguous().data_ptr() == one_row.data_ptr()


def test_a_view_through_detach_is_seen_on_the_emulated_device():
    weight = torch.zeros(5, 1).to(emps.DEVICE)
    same_memory = tie_weights._same_memory
    assert same_memory(weight.detach().T.contiguous(), weight)  # no _base behind it
    assert not same_memory(weight.T.clone(memory_format=torch.contiguous_format), weight)
