"""The watch over a learner's rule (torch, numpy, the course's own code) and the cause readers."""

from __future__ import annotations

import sys

import numpy as np
import torch

from course.exercises import check
from course.layout import oracle
from course.layout.calculator import Layout
from course.layout.exercises.address import ADDRESS
from course.layout.exercises.common import Borrowed, beyond_three_dims, ignored, judge, watched
from course.layout.oracle import Case, Mismatch, Raised


def _watch(fn, *args):
    borrowed = Borrowed()
    result = watched(fn, borrowed)(*args)
    return result, borrowed


def test_torch_calls_are_named_methods_and_properties_too():
    _, seen = _watch(lambda: torch.empty_strided((2, 3), (1, 2)).T.is_contiguous())
    assert seen.torch == ["torch.empty_strided", "Tensor.T", "Tensor.is_contiguous"]
    assert not seen.course and not seen.numpy


def test_numpy_and_the_course_are_seen():
    _, seen = _watch(lambda: np.lib.stride_tricks.as_strided(np.zeros(1), (2,), (0,)))
    assert seen.numpy and "as_strided" in " ".join(seen.numpy)
    _, seen = _watch(lambda: Layout.strided((2,), (1,)).is_contiguous())
    assert "course.layout.calculator.Layout.is_contiguous" in seen.course
    assert all("<" not in name for name in seen.course)  # no <genexpr> noise


def test_plain_arithmetic_borrows_nothing():
    result, seen = _watch(
        lambda index, stride: sum(i * s for i, s in zip(index, stride, strict=True)), (1, 2), (3, 4)
    )
    assert result == 11 and seen == Borrowed()
    assert seen.verdict("your rule") is None


def test_the_watch_ends_with_the_call_and_restores_a_profiler():
    calls = []

    def outer(frame, event, arg):
        calls.append(event)

    sys.setprofile(outer)
    try:
        _watch(lambda: 1)
        assert sys.getprofile() is outer
    finally:
        sys.setprofile(None)
    borrowed = Borrowed()
    run = watched(lambda: 1, borrowed)
    torch.zeros(2).is_contiguous()  # the checker's own torch, outside a call: not noted
    run()
    assert borrowed == Borrowed()


def test_the_course_helper_first_then_torch():
    borrowed = Borrowed(torch=["torch.empty"], course=["course.layout.calculator.apply"])
    assert "course's own" in borrowed.verdict("your rule").message
    borrowed = Borrowed(torch=["torch.a", "torch.b", "torch.c", "torch.d", "torch.e"])
    assert "torch.a, torch.b, torch.c and 2 more" in borrowed.verdict("your rule").message


def _miss(shape, yours="raised ValueError: x"):
    layout = Layout.strided(shape, tuple(1 for _ in shape))
    case = Case(layout, ((0,) * len(shape), layout.stride, 0), 0, str(layout))
    return Mismatch(case, Raised(yours) if yours.startswith("raised") else yours)


def test_beyond_three_dims_needs_every_miss_to_have_four_or_more():
    assert beyond_three_dims([_miss((1, 1, 1, 1)), _miss((1, 1, 1, 1, 1))]) is not None
    assert beyond_three_dims([_miss((1, 1)), _miss((1, 1, 1, 1))]) is None


def test_a_parameter_counts_as_ignored_only_with_evidence():
    def sloppy(index, stride, offset):  # uses the offset only on 1-dim layouts
        return offset * (len(index) == 1)

    misses = oracle.mismatches(oracle.address_cases(), sloppy)
    finding = ignored(sloppy, ADDRESS, misses)
    assert finding is not None and "`index` and `stride`" in finding.cause
    assert "`offset`" not in finding.cause


def test_judge_refuses_a_non_function_and_counts_the_cases_it_passes():
    assert "give a function" in judge(3, ADDRESS).message
    verdict = judge(ADDRESS.truth, ADDRESS)
    assert verdict.passed and f"all {len(oracle.address_cases())} layouts" in verdict.message


def test_a_crash_is_feedback():
    verdict = check("04.address", lambda i, s, o: 1 / 0)
    assert "raised ZeroDivisionError" in verdict.yours
