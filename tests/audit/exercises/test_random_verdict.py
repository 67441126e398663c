"""08.random_verdict: each known wrong judge fails with its cause, right judges written other ways
pass, and the hidden draws sit far from any sensible threshold."""

from __future__ import annotations

from course.audit.exercises import random_verdict
from course.audit.judge import ks_distance
from tests.audit.exercises.corpus_random_verdict import CORPORA
from tests.corpus import corpus_tests

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_random_judge_cases_sit_where_the_prompts_threshold_decides_them():
    """Correct draws stay well under KS 0.1 and wrong ones well over 0.25, except one placed
    between the prompt's 0.1 and a looser 0.15: the threshold the prompt names decides every
    case, and a loosened one (0.15, 0.2) is refused (issue 35)."""
    between = "normal_ with its mean shifted by 0.3"
    for label, case in random_verdict._random_cases().items():
        before, after, sample = case.tensors
        if after.isnan().any() or bool((after == before).any()):
            continue
        distance = ks_distance(after.flatten().double(), sample.flatten().double())
        if label == between:
            assert 0.11 < distance < 0.14, distance
        else:
            assert distance < 0.06 if case.want == "ok" else distance > 0.25, (label, distance)
