"""01.snapshot, 01.frozen_names and 01.frozen: each wrong answer fails on the variant that
exposes it, and is told why."""

from __future__ import annotations

import pytest

from course.exercises import check
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
