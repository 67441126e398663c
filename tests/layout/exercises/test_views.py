"""04.view_rules: each wrong rule in the corpus is told its own cause, naming the rule."""

from __future__ import annotations

import pytest

from course.exercises import check, get, solution
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "04.view_rules": (
        "keeps the strides",  # T: shape swapped, strides not
        "whatever `offset` is",  # T: offset 0
        "whatever `shape`, `stride` and `offset` are",  # T: the notebook's x.T written in
        "rounds down",  # slice: (stop - start) // step
        "keeps the input's offset",  # slice: offset not moved by start
        "stride stays",  # slice: stride not multiplied by the step
        "whatever `dim` is",  # slice: always dim 0
        "inverse permutation",  # permute
        "up to 3 dims, but not with 4",  # permute: dims unpacked by name
        "'T' rule asked torch",  # as_strided(...).T
        "course's own course.layout.calculator",  # calculator.apply(..., Op("T"))
        "one too many",  # slice: (stop - start) // step + 1
        "every dim's stride",  # slice: all strides times the step
        "start * stride * step",  # slice: the offset moved by the new stride
        "whatever `stop` is",  # slice: x[start::step]
        "whatever `stride` is",  # permute: row-major strides for the new shape
        "stride becomes the step",  # slice: the new stride is the step itself
        "moves the offset by start * step",  # slice: offset + start * step
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def _todo(*args):
    raise NotImplementedError("your code here")


def test_view_rules_need_all_three_functions():
    assert "dict of your three functions" in check("04.view_rules", lambda *a: a).message
    rules = get("04.view_rules").reference()
    assert check("04.view_rules", rules).passed
    assert "not attempted" in check("04.view_rules", {**rules, "permute": _todo}).message


def test_answers_as_lists_count_as_tuples():
    rules = get("04.view_rules").reference()
    as_lists = {
        name: (lambda f: lambda *a: [list(x) if isinstance(x, tuple) else x for x in f(*a)])(fn)
        for name, fn in rules.items()
    }
    assert check("04.view_rules", as_lists).passed


def test_an_answer_of_the_wrong_form_is_told_the_form():
    rules = get("04.view_rules").reference()
    verdict = check("04.view_rules", {**rules, "permute": lambda shape, stride, offset, dims: dims})
    assert "your 'permute' rule" in verdict.message and "return three values" in verdict.message


def test_moving_the_offset_by_start_slots_is_told_apart():
    rules = get("04.view_rules").reference()

    def step_slice(shape, stride, offset, dim, start, stop, step):
        shape_, stride_, _ = rules["step_slice"](shape, stride, offset, dim, start, stop, step)
        return shape_, stride_, offset + start

    verdict = check("04.view_rules", {**rules, "step_slice": step_slice})
    assert "moves the offset by start" in verdict.message


def test_the_solution_shows_all_three_rules(monkeypatch):
    from course import exercises

    monkeypatch.setitem(exercises._INSTRUCTOR, "on", True)
    shown = solution("04.view_rules")
    assert "def after_T" in shown and "def step_slice" in shown and "def permute" in shown


def _count_all(shape, stride, offset, dim, start, stop, step):
    new_shape, new_stride = list(shape), list(stride)
    new_shape[dim] = stop - start
    new_stride[dim] = stride[dim] * step
    return tuple(new_shape), tuple(new_stride), offset + start * stride[dim]


@pytest.mark.parametrize(
    ("rule", "wrong", "cause"),
    [
        ("step_slice", _count_all, "counts every element from"),
        ("T", lambda shape, stride, offset: (shape, stride[::-1], offset), "it keeps the shape"),
        (
            "permute",
            lambda shape, stride, offset, dims: (tuple(shape[d] for d in dims), stride, offset),
            "reorders the sizes but not the strides",
        ),
    ],
)
def test_more_classic_mistakes_are_named(rule, wrong, cause):
    rules = get("04.view_rules").reference()
    verdict = check("04.view_rules", {**rules, rule: wrong})
    assert not verdict.passed and cause in verdict.message, verdict.message
