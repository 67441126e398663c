"""Notebook 09's checkers: each known wrong answer fails, and the feedback names its real cause."""

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
SUSPECT_CAUSES = (
    "last stride is 1",  # stride[-1] != 1
    "last stride is 1",  # strides not in decreasing order
    "a buffer",  # parameters only
    "is a contiguous parameter",  # every matrix
    "no .grad",  # only parameters with a gradient
    "is not a tensor of this model",  # the story's answer, hard-coded
    "of the submodule 'encoder'",  # top-level tensors only (recurse=False)
    "no transpose",  # transposes only
    "calls checklist()",  # the course's checklist, filtered
    "calls parameter_findings()",  # the checklist's parameter check
    "persistent=False (so not in state_dict())",  # state_dict() instead of the model's tensors
    "size-1 dimensions do not count",  # strides compared with the row-major ones
    "more than once",  # parameters and state_dict() together
    "a vector with stride 2 is not contiguous",  # matrices only
    "storage offset 8",  # a storage offset taken for a layout problem
    "no view, no gaps",  # views taken for the non-contiguous tensors (_base)
    "which it fills",  # tensors that do not fill their storage
    "contiguous in that memory format, but not is_contiguous()",  # channels_last counted as fine
    "check every dtype",  # floating-point tensors only
    "suspects raised TypeError: can't convert emps:0",  # numpy's C_CONTIGUOUS flag
)
STATE_CAUSES = (
    "read the keys of optimizer.state[p]",  # Adam's keys only
    "check the state tensors themselves",  # the parameters' layout
    "every param group counts",  # the first param group only
    "by identity, not by position",  # names zipped by position
    "you missed ('encoder.weight', 'exp_avg')",  # exp_avg_sq only
    "channels_last",  # transposes only
    "the course's own checklist",  # checklist passed as the answer
    "calls state_findings()",  # the checklist's state check
    "its new gradient) is contiguous now",  # the gradients' layout
    "(state key, parameter name)",  # pairs the wrong way round
    "more than once",  # every pair twice
    "centered=True and momentum add their own keys",  # every key the learner knows of
    "rather than guess from one stride",  # last stride not 1
    "'encoder' is not the name of a parameter",  # the module's name
    "'encoder.weight' is not the name of a parameter of this model",  # the story's answer
    "Adagrad makes its state in its constructor",  # only parameters with a .grad
    "by identity, not by position, shape or address",  # names looked up by shape
    "one shape and one data pointer",  # names looked up by data_ptr()
    "zeros_like keeps a layout only when it is dense",  # the parameter's layout or the state's
    "or its parameter's name (this one is not called weight)",  # weights only
    "freezing keeps the state",  # only parameters with requires_grad
)


CAUSES = {
    "09.tie_weights": TIE_CAUSES,
    "09.suspects": SUSPECT_CAUSES,
    "09.state_suspects": STATE_CAUSES,
}


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


def test_suspects_must_be_names():
    assert "return a list" in check("09.suspects", lambda model: "encoder.weight").message
    verdict = check("09.suspects", lambda model: list(model.parameters()))
    assert "names (strings), not the tensors" in verdict.message


def test_state_suspects_must_be_pairs_of_names():
    def dotted(model, optimizer):
        reference = get("09.state_suspects").reference()
        return [f"{name}.{key}" for name, key in reference(model, optimizer)]

    assert "(parameter name, state key) pairs" in check("09.state_suspects", dotted).message


def test_the_before_the_first_step_case_really_has_no_state_yet():
    model, optimizer = exercises._before_the_first_step()
    assert not optimizer.state and not model.encoder.weight.is_contiguous()


def test_the_new_hidden_cases_are_what_their_labels_say():
    pointwise = exercises._channels_last(last_kernel=1)[2].weight  # a 1x1 conv in channels_last
    assert pointwise.is_contiguous() and pointwise.stride() != (8, 1, 1, 1)  # not row-major
    model, optimizer = exercises._per_head_adam()
    state = optimizer.state[model.heads]["exp_avg"]
    assert state.stride()[-1] == 1 and not state.is_contiguous()
    model, optimizer = exercises._made_contiguous_later()
    weight = model.encoder.weight
    assert weight.grad.is_contiguous() and not optimizer.state[weight]["exp_avg"].is_contiguous()
    assert "scale" not in exercises._Scaled().state_dict()


def test_the_dtype_feedback_names_float64_only_for_float64():
    message = check("09.tie_weights", lambda w: w.T.contiguous().half()).message
    assert "a weight keeps its dtype" in message and "float64" not in message


def test_the_round_two_hidden_cases_are_what_their_labels_say():
    one_row = torch.zeros(1, 6)  # a probe's weight: its transpose is contiguous, so no copy
    assert one_row.T.is_contiguous() and one_row.T.contiguous().data_ptr() == one_row.data_ptr()
    fired = exercises._Counted().fired
    assert fired.dtype == torch.long and not fired.is_contiguous()
    model, optimizer = exercises._adagrad_before_its_first_step()
    weight = model.encoder.weight
    assert weight.grad is None and not optimizer.state[weight]["sum"].is_contiguous()
    model, optimizer = exercises._adam_on_a_slice()
    assert not model.weight.is_contiguous()
    assert all(value.is_contiguous() for value in optimizer.state[model.weight].values())
    model, _ = exercises._tied_by_a_view()
    encoder, decoder = model.encoder.weight, model.decoder.weight
    assert encoder.shape == decoder.shape and encoder.data_ptr() == decoder.data_ptr()


def test_a_view_through_detach_is_seen_on_the_emulated_device():
    weight = torch.zeros(5, 1).to(emps.DEVICE)
    assert exercises._same_memory(weight.detach().T.contiguous(), weight)  # no _base behind it
    assert not exercises._same_memory(weight.T.clone(memory_format=torch.contiguous_format), weight)


def test_an_answer_that_raises_is_told_on_which_model():
    def state_suspects(model, optimizer):  # looks up Adam's keys, which SGD's state does not have
        return [
            (name, key)
            for name, p in model.named_parameters()
            if p in optimizer.state
            for key in ("exp_avg", "exp_avg_sq")
            if not optimizer.state[p][key].is_contiguous()
        ]

    message = check("09.state_suspects", state_suspects).message
    assert "for SGD with momentum" in message and "raised KeyError" in message
    assert "instead of expecting Adam's" in message
