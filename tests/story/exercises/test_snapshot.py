"""01.snapshot: each snapshot that is not a copy fails on the model that exposes it, told why."""

from __future__ import annotations

from course.story.exercises import snapshot
from tests.corpus import corpus_tests
from tests.story.exercises.corpus_snapshot import CORPORA

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_hidden_models_live_on_the_device_and_on_the_cpu():
    """.cpu() is a copy only off the CPU: both kinds of model are needed to see it."""
    devices = {next(make().parameters()).device.type for _, make, _ in snapshot.CASES}
    assert devices == {"emps", "cpu"}
