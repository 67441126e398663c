"""Notebook 04's checkers: the smallest disagreeing layout in the feedback, and the classics."""

from __future__ import annotations

import torch

from course.exercises import check, get
from course.layout.exercises import frozen_on_mps, layout_cases, mps_suspects


def test_address_feedback_names_the_smallest_layout_and_the_missing_offset():
    verdict = check("04.address", lambda index, stride, offset: 0)
    assert not verdict.passed and "shape (1,)" in verdict.message
    no_offset = check("04.address", get("04.address").wrong_answers[0]())
    assert "offset" in no_offset.message and "expected: slot" in str(no_offset)
    assert "raised ZeroDivisionError" in check("04.address", lambda i, s, o: 1 / 0).yours


def test_is_contiguous_feedback_points_at_size_one_dims_and_empty_tensors():
    exercise = get("04.is_contiguous")
    strict, no_empty = (check("04.is_contiguous", w()) for w in exercise.wrong_answers[:2])
    assert "size-1 dim" in strict.message
    assert "no elements" in no_empty.message


def test_view_rules_need_all_three_functions_and_say_which_one_is_wrong():
    assert "dict of your three functions" in check("04.view_rules", lambda *a: a).message
    rules = get("04.view_rules").reference()
    assert check("04.view_rules", rules).passed
    floor = check("04.view_rules", get("04.view_rules").wrong_answers[1]())
    assert "your 'step_slice' rule" in floor.message and "[0:1:3]" in floor.message
    no_offset = {**rules, "T": lambda shape, stride, offset: (shape[::-1], stride[::-1], 0)}
    assert "your 'T' rule" in check("04.view_rules", no_offset).message
    assert "not attempted" in check("04.view_rules", {**rules, "permute": _todo}).message


def _todo(*args):
    raise NotImplementedError("your code here")


def test_answers_as_lists_count_as_tuples():
    rules = get("04.view_rules").reference()
    as_lists = {
        name: (lambda f: lambda *a: [list(x) if isinstance(x, tuple) else x for x in f(*a)])(fn)
        for name, fn in rules.items()
    }
    assert check("04.view_rules", as_lists).passed


def test_make_contiguous_tries_non_contiguous_layouts():
    cases = layout_cases()
    assert sum(not t.is_contiguous() for t in cases.values()) == 4
    assert check("04.make_contiguous", lambda x: x.contiguous()).passed
    verdict = check("04.make_contiguous", lambda x: x.clone())
    assert "transposed input the result is not contiguous" in verdict.message
    wasted = check("04.make_contiguous", lambda x: x.clone(memory_format=torch.contiguous_format))
    assert "wasted copy" in wasted.message
    assert "changed its transposed input" in check("04.make_contiguous", torch.Tensor.zero_).message


def test_find_mps_bug_is_decided_by_experiment():
    frozen = [i for i, t in enumerate(mps_suspects()) if frozen_on_mps(t)]
    assert frozen == [4]
    assert not frozen_on_mps(mps_suspects()[4], profile="2.4-macos14")
    assert "storage offset does not" in check("04.find_mps_bug", 1).message
    assert "size-1 dims" in check("04.find_mps_bug", 2).message
    assert check("04.find_mps_bug", 4).passed


def test_suspects_leave_the_global_rng_alone():
    torch.manual_seed(7)
    expected = torch.rand(2)
    torch.manual_seed(7)
    mps_suspects()
    assert torch.equal(torch.rand(2), expected)


def test_predictions_run_the_real_experiment():
    from course.exercises import _prediction

    assert _prediction("04.transpose_writes").outcome() == "yes: x[1, 0] becomes 100"
    assert _prediction("04.clone_layout").outcome() == "transposed, like .T"
