"""08.verdict: each known wrong judge fails and the feedback names its real cause; right judges
written other ways pass."""

from __future__ import annotations

from tests.audit.exercises.corpus_verdict import CORPORA
from tests.corpus import corpus_tests

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)
