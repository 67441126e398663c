"""Notebook 00's checkers: each plausible wrong answer is rejected, and told what is wrong."""

from __future__ import annotations

from course.exercises import check
from course.start import exercises
from tests.corpus import corpus_tests
from tests.start.corpus_exercises import CORPORA, printed

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_variants_cover_six_devices_and_indices_of_one_and_two_digits():
    devices = [t.device for _, t in exercises._device_variants()]
    assert {d.type for d in devices} == {"cpu", "emps", "meta", "mps", "cuda", "xpu"}
    assert {d.index for d in devices} >= {1, 10}


def test_a_function_that_prints_is_not_taken_for_one_that_answers_the_index():
    verdict = check("00.device_type", printed())
    assert "returned None" in verdict.message and "index" not in verdict.message


def test_the_prediction_outcome_is_measured():
    assert exercises._mixed_devices() == "RuntimeError"
