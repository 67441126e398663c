"""What 05's checkers share: answers kept with their exceptions, the course's readers named, and
the mistake model that fits the whole run."""

from __future__ import annotations

from course.dispatch.exercises.common import (
    Answer,
    a_function,
    attempt,
    closest_model,
    first_line,
    reader_used,
)


def test_an_exception_is_an_answer():
    answer = attempt(lambda: {}["MPS"])
    assert answer.error is not None and answer.shown == "raised KeyError: 'MPS'"
    assert answer.same_as(Answer(error=KeyError("CPU"))) and not answer.same_as(Answer("x"))


def test_a_function_is_asked_for_and_a_reader_named():
    assert a_function("def f(): ...")(len) is None
    assert "give a function, e.g. def f(): ..." in a_function("def f(): ...")("f").message
    verdict = reader_used("yours", "write it")(("backend_kernel", "kernel_entry"))
    assert "yours called backend_kernel, the course's own reader" in verdict.message


def test_the_closest_model_agrees_on_the_most_variants():
    answers = [Answer(1), Answer(2), Answer(3)]
    modelled = [
        [Answer(0), Answer(2), Answer(0)],  # fits the failing variant only
        [Answer(1), Answer(2), Answer(0)],  # fits it and one more
        [Answer(1), Answer(9), Answer(3)],  # does not fit the failing variant
    ]
    assert closest_model(modelled, answers, 1) == 1
    assert closest_model(modelled[2:], answers, 1) is None


def test_first_line_drops_opchecks_pointer():
    assert first_line(ValueError("bad stride (scroll up for the trace)\nmore")) == "bad stride"
