"""06.output_placeholder: every family and layout, the block's end, and a failing graph."""

from __future__ import annotations

import pytest

from course.exercises import check
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "06.output_placeholder": (
        "nothing copied the buffer into the tensor",  # no copy back
        "contiguous buffers only",  # a clone() buffer keeps the layout
        "after the graph wrote it",  # copies in __enter__
        "wasted copy",  # copies a contiguous tensor too
        "__del__",  # copies back when collected
        "swallowed",  # __exit__ returns True
        "exc_type is None",  # copies back after a failure
        "rebound self.tensor",  # self.tensor = self.buffer
        "wrong way",  # self.buffer.copy_(self.tensor)
        "row-sliced",  # a last stride of 1 taken for contiguous
        "the course's own placeholder",  # emps.OutputPlaceholder passed as the answer
        "copies the buffer back only for some tensors",  # 2-d tensors only
        "copies the buffer back only for some tensors",  # no storage offset only
        "copies the buffer back only for some tensors",  # last stride != 1 only
        "`self.tensor.data = ...`",  # swaps the memory into the object
        "self.tensor.set_(...)",  # set_, the same swap
        "clone() and empty_like() keep",  # an empty_like buffer
        "__enter__ must return the placeholder itself",  # __enter__ returns the buffer
        "the course's own OutputPlaceholder",  # a function that makes one
        "the course's own OutputPlaceholder",  # a class that delegates to one
        "changed the tensor anyway",  # zeroes the tensor when the graph failed
        "channels-last 4-d output",  # channels-last taken for contiguous: a strided buffer
        "a storage offset ignored",  # a contiguous tensor's buffer taken from its storage's start
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_other_right_placeholders_pass():
    class SliceAssigned:
        def __init__(self, tensor):
            self.out, self.buffer = tensor, tensor.contiguous()

        def __enter__(self):
            return self

        def __exit__(self, exc_type, *rest):
            if exc_type is None and self.buffer is not self.out:
                self.out[...] = self.buffer
            return False

    class Slotted:  # attributes in __slots__: no instance __dict__
        __slots__ = ("tensor", "buffer")

        def __init__(self, tensor):
            self.tensor, self.buffer = tensor, tensor.contiguous()

        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc_value, traceback):
            if exc_type is None and not self.tensor.is_contiguous():
                self.tensor.copy_(self.buffer)

    for right in (SliceAssigned, Slotted):
        assert check("06.output_placeholder", right).passed, right.__name__


def test_enter_must_return_the_placeholder():
    class NoEnter:
        def __init__(self, tensor):
            self.tensor, self.buffer = tensor, tensor.contiguous()

        def __enter__(self):
            pass

        def __exit__(self, *exc):
            self.tensor.copy_(self.buffer)

    assert "return self" in check("06.output_placeholder", NoEnter).message


def test_a_scaffold_is_not_attempted():
    class Scaffold:
        def __init__(self, tensor):
            raise NotImplementedError("your code here")

    verdict = check("06.output_placeholder", Scaffold)
    assert "not attempted" in verdict.message and not verdict.attempted


def test_empty_bodies_are_not_attempted():
    class Emptied:
        def __init__(self, tensor):
            pass

        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc_value, traceback):
            pass

    verdict = check("06.output_placeholder", Emptied)
    assert "not attempted" in verdict.message and not verdict.attempted
