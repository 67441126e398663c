"""01.snapshot, 01.frozen_names and 01.frozen: each wrong answer fails on the variant that
exposes it, and is told why."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from course.devices import pinned_threads
from course.exercises import check
from course.model.runs import fresh_model, trainer
from course.story.exercises import weights
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "01.snapshot": (
        "the parameter itself",  # dict(model.named_parameters())
        "shares memory",  # state_dict()
        "shares memory",  # .detach()
        "the same model on the CPU",  # .detach().cpu(): a copy only off the CPU
        "is a list (.tolist())",  # a copy, but not a tensor
        "NumPy array",  # .cpu().numpy(): shares memory on the CPU
        "no entry for encoder.bias",  # weights only
        "float16 rounds them",  # .half()
        "moved the model to cpu",  # model.cpu(): moves the module in place
        "changed encoder.weight.requires_grad",  # requires_grad_(False)
        "shares memory",  # .contiguous(): a copy only of the non-contiguous encoder weight
        "shares memory",  # state_dict().copy(): a new dict, the same tensors
        "shares memory",  # .data
        "does not hold the parameter's values",  # the first row only
        "no entry for encoder.weight",  # keyed by position
        "return a dict",  # copy.deepcopy(model)
        "return a dict",  # a list of pairs
        "does not hold the parameter's values",  # a snapshot of fresh_model(), not of model
        "float64",  # .double() on emps
        "NumPy array, not a tensor",  # .numpy().copy(): a copy, but not a tensor
        "shares memory",  # reshape to its own shape: a view
        "does not hold the parameter's values",  # flattened: another shape
    ),
    "01.frozen_names": (
        "close is not equal",  # torch.allclose
        "Keep a copy",  # state_dict() kept as "before"
        "close is not equal",  # max difference < 1e-6
        "must come from the run you were given",  # ["encoder.weight"]
        "the first elements",  # first element only
        "sorted values",  # sorted values
        "a sum",  # sums
        "NaN",  # "no difference above 0"
        "biases too",  # weights only
        "never called train(model)",  # train forgotten
        "the parameters that moved",  # the answer inverted
        "any tolerance, however small",  # max difference < 1e-12
        "a relative tolerance",  # allclose(rtol=1e-6, atol=0)
        "a summary",  # norms
        "Compare whole tensors",  # 99% of the values equal: blind to a swap
        "returns nothing to read",  # the course's History.frozen, from train's return value
        "still at its starting values",  # trains a deep copy
        "misses a parameter",  # no gradient means frozen: the name is not given away
        "misses ['encoder.bias']",  # the encoder's weight only
        "list of parameter names",  # the parameters, not their names
        "moved the model to cpu",  # model.cpu() to take the copy
        "taken after train(model)",  # the "before" snapshot taken after training
        "a squared difference",  # (a - b).pow(2).sum() == 0: 1e-38 squared underflows
        "close is not equal",  # compared in float16
        "a sum",  # the means compared: blind to a swap
    ),
    "01.frozen": (
        "never trained",  # an untrained model, names typed in
        "lives on cpu",  # the run on the CPU
        "another profile",  # a later profile
        "another init",  # init="contiguous"
        "another seed",  # seed=1
        "which moved on your model",  # an aliased frozen_names
        "a count",  # 1
        "one string",  # "encoder.weight"
        "the pair (model, frozen)",  # the pair reversed
        "misses",  # []
        "not parameter names",  # ["encoder"]
        "not a copy of it",  # a frozen_names that trains a deep copy
        "another optimizer such as SGD",  # trainer(optimizer="sgd")
        "lives on cpu",  # a frozen_names that moves the model to the CPU
        "other sizes",  # a smaller model
        "list of parameter names",  # the parameter tensors
        "list of parameter names",  # the History's {name: frozen} dict
        "no parameter of your model",  # trained on the CPU, loaded back on emps
        "the pair (model, frozen)",  # a list [model, frozen]
        "misses a parameter",  # frozen by gradients: none
        "the pair (model, frozen)",  # the model alone
        "another number of steps",  # trainer(steps=2): the same names, another run
        "another learning rate",  # trainer(steps=2, lr=1e-2)
        "trained again",  # the run, then one more training of the same model
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_frozen_names_wants_names():
    verdict = check("01.frozen_names", lambda model, train: 1)
    assert not verdict.passed and "list of parameter names" in verdict.message


def test_the_cases_disagree_so_no_constant_passes():
    answers = {weights._expected_frozen(i) for i in range(len(weights.FROZEN_CASES))}
    assert {(), ("encoder.weight",), ("encoder.bias", "encoder.weight")} <= answers


@pytest.mark.parametrize("index", [i for i, case in enumerate(weights.FROZEN_CASES) if case.subtle])
def test_each_subtle_run_moves_exactly_one_tensor_or_every_one(index):
    """The edits change one tensor, invisibly to partial comparisons; lr 1e-8 moves all."""
    case = weights.FROZEN_CASES[index]
    moved = 4 - len(weights._expected_frozen(index))
    assert moved == (4 if "lr = 1e-8" in case.what else 1)


def test_the_tiny_and_the_one_step_edits_hide_below_any_tolerance():
    """1e-38 from 0 passes every absolute tolerance, one step of the largest weight rtol=1e-6."""
    model = weights._small_cpu()
    bias, decoder = model.encoder.bias.detach().clone(), model.decoder.weight.detach().clone()
    weights._edit(weights._tiny_bias)(model)
    weights._edit(weights._step_largest)(model)
    assert 0 < (model.encoder.bias - bias).abs().max().item() < 1e-30
    assert torch.allclose(model.decoder.weight, decoder, rtol=1e-6, atol=0)
    assert not model.decoder.weight.equal(decoder) and not model.encoder.bias.equal(bias)


def test_a_miss_on_the_story_profile_does_not_name_what_froze():
    """The story profile's frozen names are 01.frozen's answer: a failed check hides them."""
    shown = str(check("01.frozen_names", weights._by_gradients()))
    assert "the story's profile" in shown and "encoder.weight" not in shown


def test_the_pass_message_does_not_give_the_story_run_away():
    """01.frozen measures the story's run next: the frozen_names pass must not name it."""
    verdict = check("01.frozen_names", weights.frozen_names)
    assert verdict.passed and "encoder.weight" not in verdict.message


def test_the_sum_keeping_edit_keeps_the_sum_bitwise():
    model = weights._small_cpu()
    before = model.encoder.bias.detach().clone()
    weights._edit(weights._shift_bias)(model)
    assert model.encoder.bias.sum().item() == before.sum().item() == 0.0
    assert not model.encoder.bias.equal(before)


def test_the_swap_keeps_the_sorted_values_and_the_first_element():
    model = weights._small_cpu()
    before = model.encoder.weight.detach().clone()
    weights._edit(weights._swap_two)(model)
    after = model.encoder.weight.detach()
    assert after.flatten().sort()[0].equal(before.flatten().sort()[0])
    assert after[0, 0] == before[0, 0] and not after.equal(before)


def test_prediction_outcome_is_measured():
    assert weights._count_frozen() == "1"


def _frozen_by_loop(model, train):
    names, before = [], []
    for name, param in model.named_parameters():
        names.append(name)
        before.append(param.detach().cpu().numpy().copy())
    train(model)
    after = [p.detach().cpu().numpy() for p in model.parameters()]
    return [n for n, b, a in zip(names, before, after, strict=True) if np.array_equal(b, a)]


def _frozen_on_the_device(model, train):
    before = {n: p.clone() for n, p in model.named_parameters()}  # stays on emps, keeps grad
    train(model)
    return {n for n, p in model.named_parameters() if bool((p == before[n]).all())}


RIGHT_FROZEN_NAMES = (
    _frozen_by_loop,
    _frozen_on_the_device,
    weights._frozen_by(lambda a, b: (a - b).abs().max().item() == 0),
    weights._frozen_by(lambda a, b: a.numpy().tobytes() == b.numpy().tobytes()),
    lambda model, train: tuple(weights.frozen_names(model, train)),
)


@pytest.mark.parametrize("index", range(len(RIGHT_FROZEN_NAMES)))
def test_other_right_frozen_names_pass(index):
    assert check("01.frozen_names", RIGHT_FROZEN_NAMES[index]).passed


RIGHT_SNAPSHOTS = (
    lambda model: {n: p.clone() for n, p in model.named_parameters()},
    lambda model: copy.deepcopy(model.state_dict()),
    lambda model: {n: p.detach().to("cpu", copy=True) for n, p in model.named_parameters()},
    lambda model: {n: torch.empty_like(p).copy_(p.detach()) for n, p in model.named_parameters()},
    lambda model: {n: p.detach() + 0 for n, p in model.named_parameters()},
)


@pytest.mark.parametrize("index", range(len(RIGHT_SNAPSHOTS)))
def test_other_right_snapshots_pass(index):
    assert check("01.snapshot", RIGHT_SNAPSHOTS[index]).passed


def test_the_story_run_on_two_threads_passes():
    """The checker redoes the run on one thread; the learner's, on two, rounds otherwise."""
    model = fresh_model()
    with pinned_threads(2):
        frozen = sorted(set(_frozen_by_loop(model, trainer(steps=30))))
    assert check("01.frozen", (model, frozen)).passed


@pytest.mark.parametrize("options", [{"steps": 29}, {"steps": 30, "lr": 3e-3 * 1.01}])
def test_a_step_less_or_a_learning_rate_1pct_off_is_another_run(options):
    model = fresh_model()
    with pinned_threads(1):
        frozen = weights.frozen_names(model, trainer(**options))
    verdict = check("01.frozen", (model, frozen))
    assert not verdict.passed and "not where trainer(steps=30) takes" in verdict.message
