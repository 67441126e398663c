"""What 05's checkers share: answers kept with their exceptions, the course's readers named, and
the mistake model that fits the whole run."""

from __future__ import annotations

import pytest

from course.dispatch.exercises.common import (
    Answer,
    answer_key_verdict,
    answers_watched,
    attempt,
    closest_model,
    first_line,
)
from course.dispatch.registry import backend_kernel, lookup
from course.exercises import SCAFFOLD

KEYS = {"course.dispatch.registry.backend_kernel": "backend_kernel"}


def test_an_exception_is_an_answer_but_the_scaffold_is_not():
    answer = attempt(lambda: {}["MPS"])
    assert answer.error is not None and answer.shown == "raised KeyError: 'MPS'"
    assert answer.same_as(Answer(error=KeyError("CPU"))) and not answer.same_as(Answer("x"))

    def blank():
        raise NotImplementedError(SCAFFOLD)

    with pytest.raises(NotImplementedError):
        attempt(blank)


def test_the_course_reader_is_seen_passed_or_called_but_lookup_is_fine():
    variants = [("addcmul_", "CPU")]
    _, used = answers_watched(backend_kernel, variants, KEYS)
    assert used == ["backend_kernel"]
    _, used = answers_watched(lambda op, b: backend_kernel(op, b), variants, KEYS)
    assert used == ["backend_kernel"]
    answers, used = answers_watched(lambda op, b: lookup(op).name, variants, KEYS)
    assert used == [] and answers[0].value == "addcmul_"
    assert answer_key_verdict("yours", [], "write it") is None
    assert "the course's own reader" in answer_key_verdict("yours", ["x"], "write it").message


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
