"""02.adam_state and 02.frozen_after: the state read right, the red herrings really varied."""

from __future__ import annotations

import pytest

from course.isolation.exercises import adam_state
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "02.adam_state": (
        "decoder's state",  # reads the decoder
        "largest signed value",  # no abs
        "mean magnitude",  # a mean
        "one element",  # the first element
        "keyed by the parameter tensor itself",  # state["encoder.weight"]
        "The bench must be active",  # Adam stepped outside the bench
        "ONE step",  # two steps
        "took no Adam step",  # hard-coded numbers
    ),
    "02.frozen_after": (
        "does not run the experiment",  # always True
        "never varies the betas",  # the default betas
        "fresh Adam",  # a new optimizer every step
        "ignores `steps`",  # one step
        "stepped SGD",  # another optimizer
        "The bench must be active",  # stepped outside the bench
        "before the first step",  # the snapshot after the first step
        "the story: frozen",  # the answer inverted
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_red_herrings_change_nothing_on_the_story_profile_only():
    expected = [adam_state._expected_frozen(i) for i in range(len(adam_state.HERRING_VARIANTS))]
    assert expected == [True, True, False, False, False]


def test_the_hidden_herrings_vary_betas_and_steps():
    variants = adam_state.HERRING_VARIANTS
    assert len({v.betas for v in variants}) >= 4 and len({v.steps for v in variants}) >= 3
    assert any(v.betas[1] == 0.0 for v in variants)


def test_the_update_size_is_measured():
    assert adam_state._update_size() == "enormous: lr * m / eps"
