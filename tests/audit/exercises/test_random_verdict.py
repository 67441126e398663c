"""08.random_verdict: each known wrong judge fails with its cause, and the hidden draws sit far
from any sensible threshold."""

from __future__ import annotations

import pytest

from course.audit.exercises import random_verdict
from course.audit.judge import ks_distance
from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
RANDOM_CAUSES = (
    "pytorch#166856",  # exact values compared with the sample
    "sorted or not",  # sorted values compared
    "NaN == NaN is False",  # unwritten tested with ==
    "smallest value, not NaN",  # unwritten tested with isnan only
    "'silent-no-write' means none was",  # any unwritten element called silent-no-write
    "'ok' needs every element written",  # unwritten elements ignored
    "coverage alone is not enough",  # no distribution test
    "not its mean",  # means compared
    "too loose",  # KS threshold 0.5
    "mean 0 and standard deviation 1",  # a test for the standard normal only
    "not int64's smallest value",  # the poison hard-coded as int64's minimum
    "not with isnan",  # partial writes found with isnan only
    "however few were",  # mostly unwritten called silent-no-write
    "a mean and a spread are not a distribution",  # mean and std compared
    "keep the threshold at 0.1",  # KS threshold 0.3
    "or a normal draw of your own",  # KS against a normal draw, not the sample
    "an integer output needs the distribution test too",  # ints fully written taken for ok
    "a negative draw is no poison",  # int poison taken to be any negative value
    "the auditor's own course.audit.judge.unchanged",  # the course's unwritten test
)


@pytest.mark.parametrize(
    ("name", "index", "cause"), corpus_cases({"08.random_verdict": RANDOM_CAUSES})
)
def test_each_wrong_answer_is_told_its_own_mistake(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_random_judge_cases_are_far_from_any_sensible_threshold():
    """Correct draws stay well under KS 0.1 and wrong ones well over 0.2, so the prompt's 0.1
    (or a learner's 0.15 or 0.2) decides every case the same way."""
    for label, case in random_verdict._random_cases().items():
        if case.after.isnan().any() or bool((case.after == case.before).any()):
            continue
        distance = ks_distance(case.after.flatten().double(), case.expected.flatten().double())
        assert distance < 0.06 if case.want == "ok" else distance > 0.25, (label, distance)
