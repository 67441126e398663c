"""03.lost_ops: the later-version experiment is measured, on profiles never shown."""

from __future__ import annotations

import pytest

from course import emps
from course.adam.exercises import versions
from course.exercises import check
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "03.lost_ops": (
        "on every profile: a set written down",
        "read from it",  # the profile's name
        "read from it",  # the profile's list of broken families
        "on_profile(profile, isolate_op",  # measures the profile in force
        "never wrote into a transposed output",
        "never measured lerp_",  # only the two suspects
        "those are the ops that update",
        "the course's own experiment",
        "returned a dict",
        "looked up the profile 'hidden-addcmul-only' by name",
        "remembered from an earlier run",
        "ran only on the CPU",
        "never with contiguous inputs",
        "not only the story's suspects",  # all four measured, two kept
        "start from non-zero values",  # its isolate_op starts at zeros: a lost mul_ unseen
        "found the CPU's answer in the output, yet your set names them",  # any loss: the pair
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_expected_sets_are_measured_and_differ_from_each_profiles_list():
    expected = {p.name: versions._expected(i) for i, p in enumerate(versions.PROFILES)}
    assert expected[emps.TORCH_2_2_1.name] == {"addcmul_", "addcdiv_"}
    assert expected[emps.TORCH_2_4.name] == expected[emps.MACOS15.name] == frozenset()
    assert expected["hidden-addcmul-only"] == {"addcmul_"}
    assert expected["hidden-strided-listed"] == frozenset()  # both families listed as broken
    assert expected["hidden-several-lost"] == frozenset(versions.OPS)  # lerp_ and mul_ too


def test_every_profile_is_asked_while_another_is_in_force():
    assert all(versions._in_force(p) is not p for p in versions.PROFILES)


@pytest.mark.parametrize("answer", [42, "addcmul_", {"addcmul"}])
def test_an_answer_that_is_not_a_set_of_op_names_is_told_so(answer):
    verdict = check("03.lost_ops", lambda profile: answer)
    assert not verdict.passed and ("op names" in verdict.message or "OPS" in verdict.message)
