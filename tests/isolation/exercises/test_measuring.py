"""02.did_not_move and 02.grad_check: each shortcut is rejected, and told which one it took."""

from __future__ import annotations

import pytest

from course.exercises import check
from course.isolation.exercises import measuring
from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
CAUSES = {
    "02.did_not_move": (
        "one-ulp change",  # allclose
        "one-ulp change",  # max |diff| < 1e-6
        "without comparing the values",  # compares strides
        "not identity",  # before is after
        "moved to other places",  # compares sums
        "compare every element",  # the first element only
        "NaN garbage",  # not any(|diff| > 0)
        "bring both to the CPU",  # torch.equal across devices
        "not the first rows or the first thousand",  # the first 1000 elements
        "(abs) are the same",  # compares |values|
        "along rows or columns",  # column sums
        "every threshold",  # isclose(atol=1e-7, rtol=0)
        "a lower precision",  # compared in float16
        "either side may live on the device",  # only `after` brought to the CPU
        "without comparing the values",  # always True
        "changed its inputs",  # subtracts in place into `before`
        "however small",  # isclose(rtol=1e-9, atol=0)
        "nan_to_num turns it back",  # nan_to_num on both sides
        "a cast to float32",  # compared as float32
    ),
    "02.grad_check": (
        "largest signed value",  # no abs
        "1e-12 is not 0",  # "zero" as |g| < 1e-8
        "number of zeros",  # a count, not a fraction
        "NON-zero",  # the non-zero fraction
        "first row's largest",  # g[0] only
        "mean magnitude",  # a mean, not the max
        "rows that are all zero",  # the fraction of zero rows
        "1e-40 is not 0",  # |g| < finfo.tiny
        "the norm",  # g.norm()
        "number of rows (len)",  # divided by len(g)
        "a percentage",  # * 100
        "copied from a printed output",  # the story's pair, hard-coded
        "columns that are all zero",  # the fraction of zero columns
        "first column's largest",  # g[:, 0]
        "the smallest magnitude",  # min instead of max
        "in the wrong order",  # (zero fraction, max)
        "first row's zero fraction",  # g[0] only
        "too small for float16",  # zeros counted in float16
        "negative values too",  # g <= 0
        "rows with a zero in them",  # rows holding a zero
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_zero_pattern_is_measured():
    assert measuring._zero_pattern() == "whole rows"


@pytest.mark.parametrize(
    "grad_check",
    [
        lambda grad: [grad.abs().max().item(), (grad == 0).float().mean().item()],
        lambda grad: (grad.abs().amax(), grad.eq(0).sum() / grad.numel()),
        lambda grad: (
            float(grad.detach().cpu().numpy().__abs__().max()),
            float((grad.detach().cpu().numpy() == 0).mean()),
        ),
    ],
    ids=["a list", "tensors", "numpy"],
)
def test_other_spellings_of_the_pair_pass(grad_check):
    assert check("02.grad_check", grad_check).passed


def test_a_function_that_fails_on_the_device_is_told_where_it_raised():
    verdict = check("02.grad_check", lambda g: (g.abs().max(), (g == 0).double().mean()))
    assert not verdict.passed
    assert "(on emps:0) your grad_check raised TypeError" in verdict.message
    assert "checking your answer raised" not in verdict.message
