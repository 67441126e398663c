"""The test data of every checker: its reference, right answers written other ways, and wrong
answers keyed by the flaw each one has, with the words its feedback must contain.

A lesson's corpora live beside its tests, in `tests/<package>/exercises/corpus_<module>.py`, each
module holding `CORPORA = (Corpus(...), ...)`. tests/test_corpora.py runs them all: the
reference passes, every right answer passes, every wrong answer is refused with feedback naming
its cause, and no exercise holds fewer wrong answers than it did before the corpora left the
package (tests/corpus_counts_before.json). tests/test_solutions.py holds each reference to the
reference notebook's solution region, the one source of the answer.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from course.exercises import check

TESTS = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Corpus:
    """One exercise's test data. `reference()` gives the notebook's solution as an answer;
    `wrong`: {flaw: (a factory of the wrong answer, words the feedback must contain)};
    `right`: {how it is written: a factory of another right answer}."""

    name: str
    reference: Callable[[], Any]
    wrong: Mapping[str, tuple[Callable[[], Any], str]]
    right: Mapping[str, Callable[[], Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        assert len(self.wrong) >= 6, f"{self.name}: at least 6 plausible wrong answers"
        assert all(cause.strip() for _, cause in self.wrong.values()), (
            f"{self.name}: a blank cause matches any feedback"
        )


def corpus_modules() -> list[str]:
    """Every corpus module under tests/, as an importable name (tests/ is a package)."""
    return [
        ".".join(path.relative_to(TESTS.parent).with_suffix("").parts)
        for path in sorted(TESTS.rglob("corpus_*.py"))
    ]


def all_corpora() -> dict[str, Corpus]:
    """Every exercise's corpus by exercise name; a name given twice is an error."""
    found: dict[str, Corpus] = {}
    for module in corpus_modules():
        for corpus in importlib.import_module(module).CORPORA:
            assert corpus.name not in found, f"{corpus.name}: two corpora"
            found[corpus.name] = corpus
    return found


def reference(name: str) -> Any:
    """The reference answer of an exercise, for a test that needs one."""
    return all_corpora()[name].reference()


def assert_told_its_cause(name: str, flaw: str) -> None:
    """The wrong answer with this flaw fails, and the feedback names what is wrong with it."""
    make, cause = all_corpora()[name].wrong[flaw]
    verdict = check(name, make())
    assert not verdict.passed, f"{name} accepted the wrong answer {flaw!r}"
    assert cause in verdict.message, f"{flaw!r}: expected {cause!r} in:\n{verdict.message}"


def wrong_params(corpora: tuple[Corpus, ...]) -> list:
    """One pytest param (name, flaw) per wrong answer of these corpora, for a lesson's tests."""
    return [pytest.param(c.name, flaw, id=f"{c.name}-{flaw}") for c in corpora for flaw in c.wrong]


def right_params(corpora: tuple[Corpus, ...]) -> list:
    """One pytest param (name, how) per right answer written another way."""
    return [pytest.param(c.name, how, id=f"{c.name}-{how}") for c in corpora for how in c.right]


def assert_accepted(name: str, how: str) -> None:
    """The right answer written this other way passes."""
    verdict = check(name, all_corpora()[name].right[how]())
    assert verdict.passed, f"{name} refused the right answer {how!r}:\n{verdict}"


def corpus_tests(
    corpora: tuple[Corpus, ...], *fixtures: str, marks: tuple = ()
) -> tuple[Callable, Callable]:
    """The two tests every lesson's test module runs on its own corpora, assigned there as
    `test_each_wrong_answer_is_told_its_cause, test_a_right_answer_written_another_way_passes =
    corpus_tests(CORPORA)`: written once, and spread over the workers with the lesson's file.
    `fixtures` names module fixtures the checks need first (07 compiles its kernels together);
    `marks` are pytest marks both tests carry."""

    @pytest.mark.usefixtures(*fixtures)
    @pytest.mark.parametrize(("name", "flaw"), wrong_params(corpora))
    def test_each_wrong_answer_is_told_its_cause(name: str, flaw: str) -> None:
        assert_told_its_cause(name, flaw)

    @pytest.mark.usefixtures(*fixtures)
    @pytest.mark.parametrize(("name", "how"), right_params(corpora))
    def test_a_right_answer_written_another_way_passes(name: str, how: str) -> None:
        assert_accepted(name, how)

    for mark in marks:
        mark(test_each_wrong_answer_is_told_its_cause)
        mark(test_a_right_answer_written_another_way_passes)
    test_each_wrong_answer_is_told_its_cause.corpora = corpora  # type: ignore[attr-defined]
    return test_each_wrong_answer_is_told_its_cause, test_a_right_answer_written_another_way_passes


def tested_in_lessons() -> set[str]:
    """The exercises whose corpora some lesson's test module runs with `corpus_tests`."""
    names: set[str] = set()
    for path in sorted(TESTS.rglob("test_*.py")):
        if "corpus_tests(" in path.read_text():
            parts = path.relative_to(TESTS.parent).with_suffix("").parts
            module = importlib.import_module(".".join(parts))
            test = getattr(module, "test_each_wrong_answer_is_told_its_cause", None)
            names |= {c.name for c in getattr(test, "corpora", ())}
    return names
