"""The op-chain parser: what a learner types, and the precise complaint when it is wrong."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.layout.opchain import parse_chain, parse_ints


@pytest.mark.parametrize(
    "text, message",
    [
        ("T;;", "step 2 is empty"),
        ("view(2, x)", "step 1 'view(2, x)': expected a whole number, got 'x'"),
        ("T; flip(0)", "step 2 'flip(0)': unknown operation 'flip'"),
        ("[:, ::2", "not valid syntax"),
        ("transpose(0)", "transpose() takes 2 arguments, got 1"),
        ("clone(channels_last)", "expected a whole number"),
        ("__import__('os')", "unknown operation '__import__'"),
        ("view(2.5)", "expected a whole number, got '2.5'"),
    ],
)
def test_parse_errors_are_precise(text, message):
    with pytest.raises(CourseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_chain(text)


def test_parse_accepts_the_spellings_a_learner_writes():
    ops = parse_chain(".T; t(); [..., None, 1:]; view((2, -1)); clone(torch.contiguous_format)")
    assert [op.name for op in ops] == ["T", "t", "index", "view", "clone"]
    assert ops[2].args == (Ellipsis, None, slice(1, None, None))
    assert ops[3].args == ((2, -1),) and ops[4].args == ("contiguous_format",)


def test_parse_ints_reads_shapes_and_refuses_words():
    assert parse_ints("(4, 6)", "shape") == (4, 6) and parse_ints(" ", "shape") == ()
    with pytest.raises(CourseError, match="shape 'four': write whole numbers"):
        parse_ints("four", "shape")


@pytest.mark.parametrize("text", [None, 3, ["T"]])
def test_a_chain_must_be_text(text):
    with pytest.raises(CourseError, match="a chain of ops is text like"):
        parse_chain(text)
