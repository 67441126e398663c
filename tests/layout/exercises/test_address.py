"""04.address: each wrong rule in the corpus is told its own cause."""

from __future__ import annotations

from course.exercises import check
from tests.corpus import (
    corpus_tests,
    reference,
)
from tests.layout.exercises.corpus_address import CORPORA

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_reference_is_right_on_scalars_and_five_dims():
    verdict = check("04.address", reference("04.address"))
    assert verdict.passed and "0 to 5 dims" in verdict.message


def test_a_crash_is_shown_on_the_smallest_layout_it_happens_on():
    verdict = check("04.address", lambda index, stride, offset: offset + index[0] * stride[0])
    assert not verdict.passed
    assert "0-dim tensor" in verdict.message and "raised IndexError" in verdict.yours


def test_a_course_helper_passed_itself_is_recognised():
    from course.layout.calculator import Layout

    verdict = check("04.address", Layout.storage_index)
    assert "course's own course.layout.calculator.Layout.storage_index" in verdict.message
