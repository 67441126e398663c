"""09.tie_weights: each known wrong tie fails with its cause; copies that own their memory pass."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.casefile import exercises  # registers 09's exercises (without importing every lesson)
from course.exercises import check, get
from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
TIE_CAUSES = (
    "clone() keeps the strides",  # w.T.clone()
    "`.T` returns a view",  # w.T
    "`.t()` returns a view",  # w.t()
    "empty_like() takes the strides",  # empty_like(w.T).copy_(w.T)
    "a reshape or view keeps the order",  # reshape, not a transpose
    "is not the transpose's",  # w.clone()
    "MPS has no float64",  # the contiguous transpose, as float64
    "make float32 CPU tensors unless given dtype=",  # torch.empty(...).copy_(w.T)
    "make the copy where the weight lives",  # dtype kept, device forgotten
    "zeros_like() takes the strides",  # zeros_like(w.T).copy_(w.T)
    "an elementwise result such as w.T * 1",  # w.T * 1.0
    "changed the decoder weight itself",  # w.t_().contiguous(): transposes the decoder in place
    "changed the decoder weight itself",  # decoder.data = ...; return decoder
    "a weight keeps its dtype (Adam's state would follow the new dtype)",  # .float(): no float64
    "a (deep)copy keeps the strides",  # copy.deepcopy(w.T)
    "the transpose's strides yourself",  # empty_strided(w.T.shape, w.T.stride())
    "on emps:0: tie raised TypeError",  # through numpy: only CPU tensors go there
    "`.contiguous()` returns such a tensor as it is",  # w.T.contiguous(): a [1, n] weight's view
    "`.to(memory_format=torch.contiguous_format)` returns the tensor itself",  # no copy
    "`.T` and `.reshape()` return a view",  # reshape to the transpose's own shape
    "`.T`, `.view()` and `.flatten()` kept it without a copy",  # a copy only when one is needed
)


CAUSES = {"09.tie_weights": TIE_CAUSES}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_own_mistake(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_copies_that_always_own_their_memory_pass():
    def tie(decoder_weight):
        return decoder_weight.T.clone(memory_format=torch.contiguous_format)

    def tie_by_two_copies(decoder_weight):  # TopKSAE's own: clone, then contiguous()
        return decoder_weight.T.clone().contiguous()

    def tie_into_new_memory(decoder_weight):
        rows, columns = decoder_weight.shape
        new = torch.empty(columns, rows, dtype=decoder_weight.dtype, device=decoder_weight.device)
        return new.copy_(decoder_weight.T)

    for answer in (tie, tie_by_two_copies, tie_into_new_memory):
        assert check("09.tie_weights", answer).passed, answer.__name__


def test_a_variable_named_t_is_not_blamed_as_t():
    def tie(decoder_weight):
        t = decoder_weight.T
        return t

    message = check("09.tie_weights", tie).message
    assert "`.T` returns a view" in message and "t()" not in message


def test_the_empty_like_feedback_does_not_blame_clone():
    message = check("09.tie_weights", get("09.tie_weights").wrong_answers[3]()).message
    assert "empty_like()" in message and "clone()" not in message


def test_the_dtype_feedback_names_float64_only_for_float64():
    message = check("09.tie_weights", lambda w: w.T.contiguous().half()).message
    assert "a weight keeps its dtype" in message and "float64" not in message


def test_a_one_row_decoders_transpose_is_contiguous_already():
    one_row = torch.zeros(1, 6)  # a probe's weight: its transpose is contiguous, so no copy
    assert one_row.T.is_contiguous() and one_row.T.contiguous().data_ptr() == one_row.data_ptr()


def test_a_view_through_detach_is_seen_on_the_emulated_device():
    weight = torch.zeros(5, 1).to(emps.DEVICE)
    same_memory = exercises.tie_weights._same_memory
    assert same_memory(weight.detach().T.contiguous(), weight)  # no _base behind it
    assert not same_memory(weight.T.clone(memory_format=torch.contiguous_format), weight)


def _contiguous_then_clone(w):
    return w.T.contiguous().clone()


def _clone_only_when_already_contiguous(w):
    encoder = w.T
    if encoder.is_contiguous():
        return encoder.clone()
    return encoder.contiguous()


def _new_empty(w):
    rows, columns = w.shape
    return w.new_empty(columns, rows).copy_(w.T)


def _empty_like_in_row_major(w):
    return torch.empty_like(w.T, memory_format=torch.contiguous_format).copy_(w.T)


def _stacked_columns(w):
    return torch.stack([w[:, j] for j in range(w.shape[1])])


def _to_with_copy(w):
    return w.transpose(0, 1).to(memory_format=torch.contiguous_format, copy=True)


def _zeros_plus_transpose(w):
    return torch.zeros(w.shape[1], w.shape[0], dtype=w.dtype, device=w.device) + w.T


def _through_a_list(w):
    return torch.tensor(w.T.tolist(), dtype=w.dtype, device=w.device)


@pytest.mark.parametrize(
    "tie",
    [
        _contiguous_then_clone,
        _clone_only_when_already_contiguous,
        _new_empty,
        _empty_like_in_row_major,
        _stacked_columns,
        _to_with_copy,
        _zeros_plus_transpose,
        _through_a_list,
    ],
)
def test_right_ties_in_other_styles_pass(tie):
    verdict = check("09.tie_weights", tie)
    assert verdict.passed, verdict.message
