"""01.loss_floor and 01.floor: each wrong answer is rejected, and told the mistake it makes."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from course.exercises import check
from course.model.data import make_data
from course.model.runs import dataset
from course.story.exercises import floor
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "01.loss_floor": (
        "averaged over every element",  # .pow(2).mean()
        "a model that outputs zeros",  # x.pow(2).sum(-1).mean()
        "mean distance (a norm)",  # .norm(dim=-1).mean()
        "summed over the samples too",  # .sum()
        "square root of the loss",  # an RMS
        "sums absolute errors",  # .abs()
        "divides the total by the dimensions",  # .sum() / d_model
        "on every dataset",  # the course's floor, hard-coded
        "use .item()",  # a tensor
        "assumed noise level",  # d_model * 0.01**2: the same with twice the noise
        "rounds the loss to 4 decimals",
        "int() (or //) drops the decimals",
        "NumPy value",
        "changed data.x in place",  # x.sub_(...): dataset() is shared
        "on every dataset",  # best_possible_loss(dataset()): its own data ignored
        "averaged over all samples",  # the first 256 samples only
        "averaged over every element",  # F.mse_loss's default mean
        "all of a sample's dimensions",  # one dimension only
        "print only shows it",  # printed, not returned
        "subtracts the error's mean",  # var() * d_model: right only on centred noise
        "subtracts the error's mean",  # var(0).sum(): each dimension's mean left out
    ),
    "01.floor": (
        "averaged over every element",
        "a model that outputs zeros",
        "rebuilding the noise too",  # 0.0
        "rounded to 2 decimals",  # 0.04
        "use .item()",
        "a string",
        "where the run stalls",  # the stalled loss, 8.8, typed in
        "mean distance (a norm)",
        "rounded to 4 decimals",  # 0.0383, as the reference's output prints it
        "rounded to 3 decimals",
        "a function: call it",  # best_possible_loss, not called
        "NumPy value",
        "measure it with your function on dataset()",  # another seed's data
        "where the run stalls",  # 19.0, the loss of step 1
        "a list",
        "measure it with your function on dataset()",  # d_model * 0.01**2, assumed
        "rounded to 5 decimals",  # 0.03835: 1e-5 from the floor, within summation order's 1e-4
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_every_mistake_differs_from_the_floor_on_the_course_data():
    """A mistake that happened to give the floor could never be named: none does."""
    want = floor.best_possible_loss(dataset())
    assert all(not floor._close(m(dataset()).item(), want) for _, m in floor.MISTAKES)


def test_the_floor_is_kept_as_it_comes_summation_order_aside():
    """Rounded to 4 decimals is what a printout shows (0.0383): typed in, it must not pass."""
    want = floor.best_possible_loss(dataset())
    assert check("01.floor", want * (1 + 1e-6)).passed
    for places in (2, 3, 4, 5, 6):
        verdict = check("01.floor", round(want, places))
        assert not verdict.passed and f"rounded to {places} decimals" in verdict.message


def test_a_cell_that_changes_the_course_data_changes_only_its_copy():
    """dataset() hands out copies: `data.x -= ...` in one cell cannot skew a later check."""
    dataset().x.mul_(2)
    want = floor.best_possible_loss(dataset())
    assert (
        check("01.floor", want).passed and check("01.loss_floor", floor.best_possible_loss).passed
    )


def test_a_miss_on_the_course_data_does_not_show_its_floor():
    """That number is 01.floor's answer: a failed 01.loss_floor must not print it."""
    want = floor.best_possible_loss(dataset())
    one_batch = lambda data: floor._error(data)[:256].pow(2).sum(-1).mean().item()  # noqa: E731
    verdict = check("01.loss_floor", one_batch)
    shown = str(verdict)
    assert not verdict.passed and "the course's data" in shown and "expected: 01.floor" in shown
    assert f"{want:.4f}" not in shown and repr(want) not in shown


def test_the_course_data_are_what_make_data_makes():
    assert floor._changed_field(dataset(), make_data()) is None


def test_the_hidden_datasets_include_one_without_noise():
    assert floor.best_possible_loss(floor._floor_cases()["data without noise"]) == 0.0


def test_other_right_rules_pass():
    """Sums in another order, float64, a loop, F.mse_loss rescaled: the same floor."""
    error = floor._error

    def loop(data):
        total = 0.0
        for x, code in zip(data.x, data.codes, strict=True):
            total += (x - code @ data.features).pow(2).sum().item()
        return total / len(data.x)

    rules = (
        lambda data: error(data).pow(2).mean(0).sum().item(),
        lambda data: (
            (data.x.double() - data.codes.double() @ data.features.double())
            .square()
            .sum(1)
            .mean()
            .item()
        ),
        lambda data: float(torch.linalg.vector_norm(error(data), dim=-1).pow(2).mean()),
        lambda data: F.mse_loss(data.codes @ data.features, data.x).item() * data.x.shape[1],
        loop,
    )
    assert all(check("01.loss_floor", rule).passed for rule in rules)


def test_the_offset_data_tell_the_variance_from_the_floor():
    """Centred noise hides a variance-based rule; the offset dataset must not."""
    data = floor._other_data()["data whose noise is not centred (a 0.03 offset in every dimension)"]
    variance = (floor._error(data).var() * data.x.shape[1]).item()
    assert not floor._close(variance, floor.best_possible_loss(data))
