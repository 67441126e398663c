"""A checker against its corpus of wrong answers: each one rejected, its feedback naming the cause.

A lesson's tests list, per exercise, the words the feedback must contain for each entry of
`Exercise.wrong_answers`, in order; `corpus_cases` turns that into one test case per wrong answer.

`with_corpus()` names the exercises some test module covers this way: tests/test_exercises.py
runs its weaker "every wrong answer fails with a message" sweep only on the others, instead of
running each corpus a second time (07.write_kernel's alone: a compile and a child process each).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from course.exercises import check, get

TESTS = Path(__file__).resolve().parent
_COVERED: set[str] = set()


def corpus_cases(causes: dict[str, tuple[str, ...]]) -> list:
    """One pytest param (name, index, cause) per wrong answer; every answer has its cause."""
    params = []
    for name, words in causes.items():
        assert len(get(name).wrong_answers) == len(words) >= 6, f"{name}: one cause per answer"
        assert all(word.strip() for word in words), f"{name}: a blank cause matches any feedback"
        params += [pytest.param(name, i, word, id=f"{name}-{i}") for i, word in enumerate(words)]
        _COVERED.add(name)
    return params


def with_corpus() -> set[str]:
    """Every exercise whose wrong answers some test module checks with `corpus_cases`.

    Imports each such module (as pytest names them: tests/ is a package), so the answer does not
    depend on which test files were collected first.
    """
    for path in sorted(TESTS.rglob("test_*.py")):
        if "corpus_cases(" in path.read_text():
            parts = path.relative_to(TESTS.parent).with_suffix("").parts
            importlib.import_module(".".join(parts))
    return set(_COVERED)


def assert_told_its_cause(name: str, index: int, cause: str) -> None:
    """The wrong answer fails, and the feedback names what is wrong with it."""
    verdict = check(name, get(name).wrong_answers[index]())
    assert not verdict.passed, f"{name} accepted wrong answer {index}"
    assert cause in verdict.message, verdict.message
