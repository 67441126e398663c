"""01.loss_floor and 01.floor: each wrong answer is rejected, and told the mistake it makes."""

from __future__ import annotations

import pytest

from course.exercises import check
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
        "on every dataset",  # the course's floor, hard-coded
        "use .item()",  # a tensor
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
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_every_mistake_differs_from_the_floor_on_the_course_data():
    """A mistake that happened to give the floor could never be named: none does."""
    want = floor.best_possible_loss(dataset())
    assert all(not floor._close(m(dataset()).item(), want) for _, m in floor.MISTAKES)


def test_the_floor_may_be_rounded_for_printing_but_not_too_far():
    want = floor.best_possible_loss(dataset())
    assert check("01.floor", round(want, 3)).passed and check("01.floor", round(want, 5)).passed
    assert not check("01.floor", round(want, 2)).passed


def test_the_hidden_datasets_include_one_without_noise():
    assert floor.best_possible_loss(floor._floor_cases()["data without noise"]) == 0.0
