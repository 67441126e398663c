"""02.frozen_after: the red herrings (Adam's betas, its step count) really varied."""

from __future__ import annotations

import torch

from course.exercises import check
from course.isolation import experiments
from course.isolation.exercises import herrings
from tests.corpus import corpus_tests
from tests.isolation.exercises import corpus_adam_state

CORPORA = tuple(c for c in corpus_adam_state.CORPORA if c.name == "02.frozen_after")


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_red_herrings_change_nothing_on_the_story_profile_only():
    expected = [herrings.expected(i) for i in range(len(herrings.VARIANTS))]
    assert expected == [True, True, False, False, False, False, False, False, False]


def test_the_hidden_herrings_vary_betas_and_steps():
    variants = herrings.VARIANTS
    assert len({v.betas for v in variants}) >= 4 and len({v.steps for v in variants}) >= 3
    assert any(v.betas[1] == 0.0 for v in variants)


def test_stopping_early_and_saying_frozen_is_still_told_the_step_count():
    def frozen_after(bench, betas, steps):
        start = bench.snapshot()["encoder.weight"]
        bench.backward()
        bench.step(experiments.adam(lr=1e-3, betas=betas))
        return torch.equal(start, bench.snapshot()["encoder.weight"])

    verdict = check("02.frozen_after", frozen_after)
    assert not verdict.passed and "ignores `steps`" in verdict.message
