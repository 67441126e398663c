"""03.lost_ops: the later-version experiment is measured, on profiles never shown."""

from __future__ import annotations

from course import emps
from course.adam.exercises import versions
from tests.adam.exercises.corpus_versions import CORPORA
from tests.corpus import corpus_tests

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_expected_sets_are_measured_and_differ_from_each_profiles_list():
    expected = {p.name: versions.expected(i) for i, p in enumerate(versions.PROFILES)}
    assert expected[emps.TORCH_2_2_1.name] == {"addcmul_", "addcdiv_"}
    assert expected[emps.TORCH_2_4.name] == expected[emps.MACOS15.name] == frozenset()
    assert expected["hidden-addcmul-only"] == {"addcmul_"}
    assert expected["hidden-strided-listed"] == frozenset()  # both families listed as broken
    assert expected["hidden-several-lost"] == frozenset(versions.OPS)  # lerp_ and mul_ too


def test_every_profile_is_asked_while_another_is_in_force():
    assert all(versions._in_force(p) is not p for p in versions.PROFILES)
