"""02.differences: the metadata two tensors differ in, and no shortcut through the hidden pairs."""

from __future__ import annotations

from course.isolation.exercises import differences
from tests.corpus import corpus_tests
from tests.isolation.exercises import corpus_controls

CORPORA = tuple(c for c in corpus_controls.CORPORA if c.name == "02.differences")


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_every_property_differs_in_some_hidden_pair():
    found = set().union(*(differences._differences(a, b) for _, a, b, _ in differences._pairs()))
    assert found == set(differences.PROPERTIES)
