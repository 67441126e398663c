"""02.adam_state: the state read right (02.frozen_after is test_herrings.py's)."""

from __future__ import annotations

from course.isolation.exercises import adam_state
from tests.corpus import corpus_tests
from tests.isolation.exercises import corpus_adam_state

CORPORA = tuple(c for c in corpus_adam_state.CORPORA if c.name != "02.frozen_after")


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_update_size_is_measured():
    assert adam_state.update_size() == "enormous: lr * m / eps"
