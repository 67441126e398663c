"""Every checker against its corpus: the reference and the right answers pass, each wrong answer
is refused with its cause, and no check was lost when the corpora left the package."""

from __future__ import annotations

import json

import pytest

from course.exercises import all_exercises, check
from tests.corpus import TESTS, all_corpora, tested_in_lessons

CORPORA = all_corpora()
BEFORE = json.loads((TESTS / "corpus_counts_before.json").read_text())
# Exercises that stopped being checks, and why (their wrong answers no longer apply).
BECAME_PREDICTIONS = {"07.predict_scramble": "a prediction of the common kind now"}


def test_every_exercise_has_a_corpus():
    assert sorted(CORPORA) == sorted(all_exercises())


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_no_wrong_answer_was_lost_in_the_move(name):
    if name in BECAME_PREDICTIONS:
        assert name not in all_exercises(), BECAME_PREDICTIONS[name]
        return
    assert len(CORPORA[name].wrong) >= BEFORE[name]


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_the_reference_passes(name):
    verdict = check(name, CORPORA[name].reference())
    assert verdict.passed, str(verdict)


def test_every_corpus_is_run_by_its_lessons_tests():
    """Each lesson's test module runs its own corpora (spread over the workers by file)."""
    assert sorted(tested_in_lessons()) == sorted(CORPORA)
