"""A learner copy's blanks, of any type, are "not attempted yet" and never journaled."""

from __future__ import annotations

import functools

import pytest
import torch

from course import exercises, journal
from course.exercises import blanks


def _scaffold(*args):
    raise NotImplementedError("your code here")


def _pass_body(x):
    pass


def _docstring_and_dots(x):
    """Return the square of x."""
    ...


class _ScaffoldClass:
    def __init__(self, tensor):
        raise NotImplementedError("your code here")

    def __enter__(self):
        return self

    def __exit__(self, *info):
        raise NotImplementedError("your code here")


class _EmptyClass:
    pass


BLANKS = {
    "Ellipsis": ...,
    "function": _scaffold,
    "dict of functions": {"T": _scaffold, "permute": _scaffold},
    "tuple of functions": (_scaffold, _scaffold),
    "one of two still blank": {"T": lambda *a: a, "permute": _scaffold},
    "class whose methods are scaffolds": _ScaffoldClass,
    "empty class": _EmptyClass,
    "pass body": _pass_body,
    "docstring and ... body": _docstring_and_dots,
    "dict holding ...": {"value": ...},
    "partial of a scaffold": functools.partial(_scaffold, 1),
}


@pytest.mark.parametrize("answer", BLANKS.values(), ids=BLANKS)
def test_a_blank_of_any_type_is_not_attempted_and_not_journaled(careful, answer):
    verdict = exercises.check("99.square", answer)
    assert exercises.NOT_ATTEMPTED in verdict.message and not verdict.attempted
    assert "stuck?" not in verdict.message and "Ellipsis" not in verdict.message
    assert journal.load() == []  # a blank answer is not an attempt


def test_not_attempted_names_the_blank_parts():
    assert blanks.untouched({"T": lambda *a: a, "permute": _scaffold}) == ["_scaffold"]
    assert blanks.untouched(_ScaffoldClass) == [
        "_ScaffoldClass.__init__",
        "_ScaffoldClass.__exit__",
    ]
    assert "_ScaffoldClass.__init__, _ScaffoldClass.__exit__ are still blank" in str(
        blanks.blank(_ScaffoldClass)
    )
    assert "replace the `...`" in blanks.blank(...).message


class _Real:
    def __init__(self, tensor):
        self.tensor = tensor


class _Subclass(dict):
    pass


def _square(x):
    return x * x


REAL = {
    "lambda": lambda x: x * x,
    "function": _square,
    "class": _Real,
    "subclass that adds nothing": _Subclass,
    "tensor": torch.ones(2),
    "zero": 0,
    "False": False,
    "empty string": "",
    "empty list": [],
    "builtin": abs,
    "None": None,
}


@pytest.mark.parametrize("answer", REAL.values(), ids=REAL)
def test_real_answers_are_never_taken_for_blanks(answer):
    assert blanks.untouched(answer) == [] and blanks.blank(answer) is None


def test_only_the_scaffolds_own_message_is_a_blank_error():
    assert blanks.is_scaffold(NotImplementedError(blanks.SCAFFOLD))
    assert not blanks.is_scaffold(NotImplementedError("aten::pow on 'emps'"))
    assert not blanks.is_scaffold(ValueError(blanks.SCAFFOLD))
    assert not blanks.blank_error(NotImplementedError(blanks.SCAFFOLD)).attempted
    assert blanks.blank_error(KeyError("x")) is None


def test_the_watch_notes_a_scaffold_raised_through_a_caller():
    def square(x):
        return _scaffold(x)

    watched, raised = blanks.watched_for_scaffold(square)
    with pytest.raises(NotImplementedError):
        watched(2)
    assert raised()
    value, raised = blanks.watched_for_scaffold(4)
    assert value == 4 and not raised()


def test_a_function_that_calls_a_blank_one_is_not_attempted_even_when_the_checker_catches_it(
    careful,
):
    def square(x):
        return _scaffold(x)

    verdict = exercises.check("99.square", square)
    assert exercises.NOT_ATTEMPTED in verdict.message and "stuck?" not in verdict.message
    assert journal.load() == []


def test_a_real_not_implemented_error_is_a_real_failure(careful):
    def square(x):
        raise NotImplementedError("aten::pow is not implemented for 'emps'")

    verdict = exercises.check("99.square", square)
    assert not verdict.passed and exercises.NOT_ATTEMPTED not in verdict.message
    assert "aten::pow" in verdict.message
    assert exercises.check("99.square", lambda x: x * x).passed
