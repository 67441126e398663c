"""Conditions as a learner names them, and what each is modelled on."""

from __future__ import annotations

import pytest

from course.layout.named import LAYOUTS
from course.mystery.conditions import CONDITIONS, DECOY_ONLY, LAYOUT_KINDS, PATTERNS, condition_name


@pytest.mark.parametrize(
    "typed, name",
    [
        ("channels_last", "channels-last"),
        ("torch.channels_last", "channels-last"),
        ("Channels Last", "channels-last"),
        ("bf16", "bfloat16"),
        ("permuted-3d", "permuted"),
        ("storage_offset", "storage-offset"),
        (" large ", "large"),
        ("FOREACH", "foreach"),
        ("broadcast", "broadcast-input"),
        ("aliased", "aliased-input"),
        ("negative scalar", "negative-scalar"),
        ("repeated call", "repeat-call"),
        ("long dimension", "long-dim"),
    ],
)
def test_every_spelling_a_learner_types_is_accepted(typed, name):
    assert condition_name(typed) == name


@pytest.mark.parametrize("typed", ["diagonal", "", None, 3, ["transposed"]])
def test_anything_else_is_no_condition(typed):
    assert condition_name(typed) is None


def test_layouts_use_the_course_vocabulary_and_every_planted_condition_has_a_pattern():
    assert set(LAYOUT_KINDS) <= set(LAYOUTS)
    assert set(PATTERNS) == set(CONDITIONS) - set(DECOY_ONLY)
