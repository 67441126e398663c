"""The version profiles: named stacks, custom broken sets, and unknown names refused."""

from __future__ import annotations

import pytest

from course import emps
from course.emps import profiles
from course.errors import CourseError
from tests.emps.outputs import POISON, ones, transposed


def test_custom_broken_set_and_unknown_family():
    profile = emps.get_profile("fixed-macos14").with_broken({"addcdiv"})
    with emps.use_profile(profile):
        out = transposed()
        out.addcdiv_(ones(), ones())
        assert bool((out.cpu() == POISON).all())
    with pytest.raises(CourseError, match="unknown kernel families"):
        profile.with_broken({"matmul"})
    with pytest.raises(CourseError, match="unknown emulated profile"):
        emps.get_profile("2.3")


def test_a_profile_shows_a_learner_its_versions_only():
    spoilers = ("addcmul", "addcdiv", "drop", "fixed", "random", "temporaries")
    for profile in emps.PROFILES.values():
        assert "macOS" in profile.label and not any(word in profile.label for word in spoilers)
        assert "macOS" in profile.description and profile.references
    assert emps.get_profile(emps.DEFAULT_PROFILE) is emps.TORCH_2_2_1
    custom = emps.FIXED_MACOS14.with_broken({"addcdiv"}, name="mine")
    assert custom.name == "mine"
    assert custom.label == "a recent PyTorch on macOS 14, broken=['addcdiv']"


@pytest.mark.parametrize(
    ("broken", "match"),
    [
        (None, "broken=None is not allowed: give a set of kernel families"),
        (3, "broken=3 is not allowed"),
        ({"addcmul": 1}, "broken="),  # a dict is no set of names: refused before iterating
        ({1, 2}, "kernel families are names"),
    ],
)
def test_with_broken_refuses_what_is_no_set_of_families(broken, match):
    with pytest.raises(CourseError, match=match):
        emps.FIXED_MACOS14.with_broken(broken)
    with pytest.raises(CourseError, match="name=3"):
        emps.FIXED_MACOS14.with_broken({"addcmul"}, name=3)


@pytest.mark.parametrize("profile", list(profiles.PROFILES.values()), ids=lambda p: p.name)
def test_a_printed_profile_shows_its_versions_never_what_breaks(profile):
    shown = f"{profile!r} {profile} {[profile]}"
    assert profile.label in shown
    families = profiles.ADAM_FAMILIES | profiles.RANDOM_FAMILIES
    assert not any(family in shown for family in families), shown
    assert "drop" not in shown and "pytorch#" not in shown.lower()
