"""01.frozen: each wrong answer fails on the run that exposes it, told why (01.frozen_names is
test_frozen_names.py's)."""

from __future__ import annotations

import pytest

from course.devices import pinned_threads
from course.exercises import check
from course.model.runs import fresh_model, trainer
from course.story.exercises import frozen, frozen_names
from tests.corpus import corpus_tests
from tests.story.exercises import corpus_frozen
from tests.story.exercises.corpus_frozen import frozen_by_loop

CORPORA = tuple(c for c in corpus_frozen.CORPORA if c.name != "01.frozen_names")


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_prediction_outcome_is_measured():
    assert frozen._count_frozen() == "1"


def test_the_story_run_on_two_threads_passes():
    """The checker redoes the run on one thread; the learner's, on two, rounds otherwise."""
    model = fresh_model()
    with pinned_threads(2):
        names = sorted(set(frozen_by_loop(model, trainer(steps=30))))
    assert check("01.frozen", (model, names)).passed


@pytest.mark.parametrize("options", [{"steps": 29}, {"steps": 30, "lr": 3e-3 * 1.01}])
def test_a_step_less_or_a_learning_rate_1pct_off_is_another_run(options):
    model = fresh_model()
    with pinned_threads(1):
        names = frozen_names.frozen_names(model, trainer(**options))
    verdict = check("01.frozen", (model, names))
    assert not verdict.passed and "not where trainer(steps=30) takes" in verdict.message
