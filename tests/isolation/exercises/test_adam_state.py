"""02.adam_state and 02.frozen_after: the state read right, the red herrings really varied."""

from __future__ import annotations

import pytest
import torch

from course.exercises import check
from course.isolation import experiments
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
        "in that order",  # (exp_avg_sq, exp_avg)
        "(0.01, (0.9, 0.999))",  # lr 1e-2
        "(0.001, (0.9, 0.9))",  # other betas
        "without bench.backward()",  # no backward: no state
        "copied from a printed output",  # one step, then the printed pair
        "the encoder's bias",  # encoder.bias
        "also stepped SGD",  # an SGD step first
        "the sum of magnitudes",  # a sum
        "the smallest",  # exp_avg_sq's min
        "stepped AdamW, not Adam",  # AdamW taken for Adam
        "that is the norm",  # a norm
        "what the formula says one step gives",  # worked out from the gradient, not read
        "eps = 0.001",  # Adam with another eps
        "weight_decay = 0.1",  # Adam with weight decay
        "amsgrad = True",  # AMSGrad: the same state numbers
        "maximize = True",  # maximize: the same magnitudes
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
        "step 2 ran without a bench.backward()",  # one backward for all steps
        "step 1 ran without a bench.backward()",  # step, then backward
        "in the wrong order",  # betas reversed
        "lr 0.01",  # another learning rate
        "allclose, a threshold or a sum",  # torch.allclose
        "compare every row, not the first ones",  # the first rows
        "allclose, a threshold or a sum",  # sums
        "allclose, a threshold or a sum",  # max |diff| < 1e-6
        "or is off by one",  # steps - 1
        "amsgrad = True",  # AMSGrad
        "maximize = True",  # maximize
        "weight_decay = 0.01",  # weight decay
        "not every other row",  # every other row
        "or the first columns",  # the first columns
        "not from a proxy such as exp_avg_sq",  # frozen read from exp_avg_sq
        "not from a proxy such as exp_avg_sq",  # snapshots equal, or exp_avg_sq 0
        "not each step on its own",  # the last step compared alone
        "not each step on its own",  # frozen if any one step was
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_red_herrings_change_nothing_on_the_story_profile_only():
    expected = [adam_state._expected_frozen(i) for i in range(len(adam_state.HERRING_VARIANTS))]
    assert expected == [True, True, False, False, False, False, False, False, False]


def test_the_hidden_herrings_vary_betas_and_steps():
    variants = adam_state.HERRING_VARIANTS
    assert len({v.betas for v in variants}) >= 4 and len({v.steps for v in variants}) >= 3
    assert any(v.betas[1] == 0.0 for v in variants)


def test_the_update_size_is_measured():
    assert adam_state._update_size() == "enormous: lr * m / eps"


def test_a_list_for_the_pair_passes():
    def encoder_adam_state(bench):
        bench.backward()
        optimizer = bench.step(experiments.adam(lr=1e-3))
        state = optimizer.state[bench.parameter("encoder.weight")]
        return [state["exp_avg"].abs().max().item(), state["exp_avg_sq"].max().item()]

    assert check("02.adam_state", encoder_adam_state).passed


def test_returning_as_soon_as_the_encoder_moved_passes():
    def frozen_after(bench, betas, steps):
        start = bench.snapshot()["encoder.weight"]
        optimizer = experiments.adam(lr=1e-3, betas=betas)
        for _ in range(steps):
            bench.backward()
            optimizer = bench.step(optimizer)
            if not torch.equal(start, bench.snapshot()["encoder.weight"]):
                return False  # moved: no later step can make it never have moved
        return True

    assert check("02.frozen_after", frozen_after).passed


def test_stopping_early_and_saying_frozen_is_still_told_the_step_count():
    def frozen_after(bench, betas, steps):
        start = bench.snapshot()["encoder.weight"]
        bench.backward()
        bench.step(experiments.adam(lr=1e-3, betas=betas))
        return torch.equal(start, bench.snapshot()["encoder.weight"])

    verdict = check("02.frozen_after", frozen_after)
    assert not verdict.passed and "ignores `steps`" in verdict.message
