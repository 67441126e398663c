"""09.state_suspects: each known wrong rule fails with its cause, on hidden optimizers."""

from __future__ import annotations

import pytest
import torch

from course.casefile import exercises  # registers 09's exercises (without importing every lesson)
from course.exercises import check, get
from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
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


CAUSES = {"09.state_suspects": STATE_CAUSES}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_own_mistake(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_state_suspects_must_be_pairs_of_names():
    def dotted(model, optimizer):
        reference = get("09.state_suspects").reference()
        return [f"{name}.{key}" for name, key in reference(model, optimizer)]

    assert "(parameter name, state key) pairs" in check("09.state_suspects", dotted).message


def test_the_before_the_first_step_case_really_has_no_state_yet():
    model, optimizer = exercises.state_suspects._before_the_first_step()
    assert not optimizer.state and not model.encoder.weight.is_contiguous()


def test_the_hidden_optimizers_are_what_their_labels_say():
    model, optimizer = exercises.state_suspects._per_head_adam()
    state = optimizer.state[model.heads]["exp_avg"]
    assert state.stride()[-1] == 1 and not state.is_contiguous()
    model, optimizer = exercises.state_suspects._made_contiguous_later()
    weight = model.encoder.weight
    assert weight.grad.is_contiguous() and not optimizer.state[weight]["exp_avg"].is_contiguous()
    model, optimizer = exercises.state_suspects._adagrad_before_its_first_step()
    weight = model.encoder.weight
    assert weight.grad is None and not optimizer.state[weight]["sum"].is_contiguous()
    model, optimizer = exercises.state_suspects._adam_on_a_slice()
    assert not model.weight.is_contiguous()
    assert all(value.is_contiguous() for value in optimizer.state[model.weight].values())
    model, _ = exercises.state_suspects._tied_by_a_view()
    encoder, decoder = model.encoder.weight, model.decoder.weight
    assert encoder.shape == decoder.shape and encoder.data_ptr() == decoder.data_ptr()


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


def _state_iterated_directly(model, optimizer):
    names = {p: n for n, p in model.named_parameters()}
    found = set()
    for p in optimizer.state:
        for key in optimizer.state[p]:
            value = optimizer.state[p][key]
            if torch.is_tensor(value) and not value.is_contiguous():
                found.add((names[p], key))
    return found


def _param_groups_and_ids(model, optimizer):
    names = {id(p): n for n, p in model.named_parameters()}
    return [
        (names[id(p)], key)
        for group in optimizer.param_groups
        for p in group["params"]
        for key, value in optimizer.state.get(p, {}).items()
        if isinstance(value, torch.Tensor) and value.dim() > 0 and not value.is_contiguous()
    ]


def _names_first_as_a_tuple(model, optimizer):
    found = []
    for name, p in model.named_parameters():
        if p in optimizer.state:
            found += [(name, k) for k, v in optimizer.state[p].items() if not v.is_contiguous()]
    return tuple(found)


def _through_the_state_dict(model, optimizer):
    held = [p for group in optimizer.param_groups for p in group["params"]]
    names = {p: n for n, p in model.named_parameters()}
    return sorted(
        (names[held[index]], key)
        for index, state in optimizer.state_dict()["state"].items()
        for key, value in state.items()
        if torch.is_tensor(value) and not value.is_contiguous()
    )


def _a_frozenset(model, optimizer):
    names = {p: n for n, p in model.named_parameters()}
    return frozenset(
        (names[p], key)
        for p, state in optimizer.state.items()
        for key, value in state.items()
        if isinstance(value, torch.Tensor) and not value.is_contiguous()
    )


def _pairs_as_lists(model, optimizer):
    return [list(pair) for pair in get("09.state_suspects").reference()(model, optimizer)]


def _name_found_by_is(model, optimizer):
    pairs = []
    for p, state in optimizer.state.items():
        name = next(n for n, q in model.named_parameters() if q is p)
        for key, value in sorted(state.items()):
            if isinstance(value, torch.Tensor) and not value.is_contiguous():
                pairs.append((name, key))
    return pairs


@pytest.mark.parametrize(
    "state_suspects",
    [
        _state_iterated_directly,
        _param_groups_and_ids,
        _names_first_as_a_tuple,
        _through_the_state_dict,
        _a_frozenset,
        _pairs_as_lists,
        _name_found_by_is,
    ],
)
def test_right_state_suspects_in_other_styles_pass(state_suspects):
    verdict = check("09.state_suspects", state_suspects)
    assert verdict.passed, verdict.message
