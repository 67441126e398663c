"""The verdicts: nothing written, something wrong written, and NaN poison handled."""

from __future__ import annotations

import pytest
import torch

from course.audit.distributions import normal
from course.audit.judge import judge, ks_distance, unchanged
from course.errors import CourseError


def test_judge_tells_zeros_from_nothing():
    before = torch.arange(1.0, 7.0).reshape(2, 3)
    expected = before * 3
    assert judge(before, before.clone(), expected)[0] == "silent-no-write"
    assert judge(before, torch.zeros_like(before), expected)[0] == "wrong-values"
    assert judge(before, expected.clone(), expected)[0] == "ok"


def test_an_op_that_leaves_elements_alone_is_not_a_lost_write():
    before = torch.linspace(-2, 2, 12)
    expected = before.clamp(-1, 1)  # the middle elements legitimately stay as they were
    assert judge(before, expected.clone(), expected)[0] == "ok"
    assert judge(before, before.clone(), expected)[0] == "silent-no-write"
    half = torch.where(torch.arange(12) < 6, expected, before)
    verdict, detail = judge(before, half, expected)
    assert verdict == "wrong-values" and "still hold their old values" in detail


def test_nan_poison_is_unchanged_when_never_written():
    poison = torch.full((4, 5), float("nan"))
    expected = torch.rand(4, 5)
    assert unchanged(poison, poison.clone()).all()
    assert judge(poison, poison.clone(), expected)[0] == "silent-no-write"
    assert judge(poison, expected.clone(), expected)[0] == "ok"


def test_two_valued_dtypes_are_judged_by_every_element():
    before = torch.tensor([True, False, True, False])
    expected = torch.tensor([False, False, True, True])
    assert judge(before, before.clone(), expected)[0] == "silent-no-write"
    assert judge(before, torch.ones(4, dtype=torch.bool), expected)[0] == "wrong-values"


def test_tolerance_follows_the_dtype_and_never_hides_a_lost_write():
    before = torch.arange(1.0, 7.0)
    assert judge(before, before.clone(), before * 1.0005, scale=10)[0] == "ok"
    assert judge(before, before.clone(), before * 1.5, scale=10)[0] == "silent-no-write"
    half = before.half()
    assert judge(half, (half * 2) * (1 + 2e-3), half * 2)[0] == "ok"
    assert judge(before, before * 2 * (1 + 2e-3), before * 2)[0] == "wrong-values"


def test_random_ops_are_judged_by_coverage_and_their_law():
    gen = torch.Generator().manual_seed(0)
    poison = torch.full((1536,), float("nan"))
    law = normal(0.3, 0.5)
    drawn = torch.empty(1536).normal_(0.3, 0.5, generator=gen)
    verdict, detail = judge(poison, drawn, law)
    assert verdict == "ok" and "N(0.3, 0.5^2)" in detail
    assert judge(poison, torch.zeros(1536), law)[0] == "wrong-values"
    assert judge(poison, poison.clone(), law)[0] == "silent-no-write"
    partly = torch.where(torch.arange(1536) < 100, poison, drawn)
    verdict, detail = judge(poison, partly, law)
    assert verdict == "wrong-values" and "never written" in detail
    ignored_std = torch.empty(1536).normal_(0.3, 1.0, generator=gen)
    verdict, detail = judge(poison, ignored_std, law)
    assert verdict == "wrong-values" and "variance" in detail


def test_writes_outside_the_view_are_wrong_whatever_the_view_holds():
    before = torch.arange(1.0, 7.0)
    verdict, detail = judge(before, before * 2, before * 2, outside=3)
    assert verdict == "wrong-values" and "wrote 3 storage slots outside its view" in detail
    verdict, detail = judge(before, before.clone(), before * 2, outside=1)
    assert verdict == "wrong-values" and "kept their old values" in detail


def test_ks_distance_handles_ties_exactly():
    a = torch.randn(500, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert ks_distance(a, a) == 0.0
    assert ks_distance(a, a + 10) == 1.0
    coins = torch.tensor([0.0, 0.0, 1.0, 1.0])
    assert ks_distance(coins, torch.tensor([0.0, 1.0, 1.0, 1.0])) == 0.25


def test_ks_distance_takes_any_shape_and_names_bad_samples():
    a = torch.randn(6, 5, generator=torch.Generator().manual_seed(2))
    assert ks_distance(a, a.t()) == 0.0  # the same values in another layout
    assert ks_distance(a, a.flatten() + 10) == 1.0
    for bad, words in [(torch.zeros(0), "0 torch.float32 values"), ([1.0, 2.0], "got list")]:
        with pytest.raises(CourseError, match="non-empty tensor of real numbers") as caught:
            ks_distance(bad, a)
        assert words in str(caught.value)
