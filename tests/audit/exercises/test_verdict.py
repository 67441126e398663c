"""08.verdict: each known wrong judge fails and the feedback names its real cause; right judges
written other ways pass."""

from __future__ import annotations

import pytest

from tests.audit.exercises.corpus_verdict import CORPORA
from tests.corpus import assert_accepted, assert_told_its_cause, right_params, wrong_params


@pytest.mark.parametrize(("name", "flaw"), wrong_params(CORPORA))
def test_each_wrong_answer_is_told_its_cause(name, flaw):
    assert_told_its_cause(name, flaw)


@pytest.mark.parametrize(("name", "how"), right_params(CORPORA))
def test_a_right_answer_written_another_way_passes(name, how):
    assert_accepted(name, how)
