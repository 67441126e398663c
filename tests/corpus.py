"""A checker against its corpus of wrong answers: each one rejected, its feedback naming the cause.

A lesson's tests list, per exercise, the words the feedback must contain for each entry of
`Exercise.wrong_answers`, in order; `corpus_cases` turns that into one test case per wrong answer.
"""

from __future__ import annotations

import pytest

from course.exercises import check, get


def corpus_cases(causes: dict[str, tuple[str, ...]]) -> list:
    """One pytest param (name, index, cause) per wrong answer; every answer has its cause."""
    params = []
    for name, words in causes.items():
        assert len(get(name).wrong_answers) == len(words) >= 6, f"{name}: one cause per answer"
        params += [pytest.param(name, i, word, id=f"{name}-{i}") for i, word in enumerate(words)]
    return params


def assert_told_its_cause(name: str, index: int, cause: str) -> None:
    """The wrong answer fails, and the feedback names what is wrong with it."""
    verdict = check(name, get(name).wrong_answers[index]())
    assert not verdict.passed, f"{name} accepted wrong answer {index}"
    assert cause in verdict.message, verdict.message
