"""02.adam_state: the state read right (02.frozen_after is test_herrings.py's)."""

from __future__ import annotations

import pytest
import torch

from course.exercises.registry import prediction
from course.isolation import experiments
from course.isolation.exercises import adam_state
from tests.corpus import corpus_tests
from tests.isolation.exercises import corpus_adam_state

CORPORA = tuple(c for c in corpus_adam_state.CORPORA if c.name != "02.frozen_after")


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_update_size_is_measured():
    assert adam_state.update_size() == "enormous: lr * m / eps"


def first_step_factor(lr: float = 1e-3) -> float:
    """How many times |exp_avg| the installed torch's Adam moves a weight at step 1 when
    exp_avg_sq is exactly 0: a gradient of 1e-30 squares to 0 in float32, as on the story's device.
    """
    p = torch.nn.Parameter(torch.zeros(4))
    p.grad = torch.full((4,), 1e-30)
    optimizer = torch.optim.Adam([p], lr=lr)
    optimizer.step()
    state = optimizer.state[p]
    assert torch.equal(state["exp_avg_sq"], torch.zeros(4))
    return (p.detach().abs() / state["exp_avg"].abs()).max().item()


def test_the_reveal_gives_the_step_that_torch_measures():
    assert first_step_factor() == pytest.approx(1e6, rel=1e-6)  # lr / ((1 - beta1) * eps)
    assert "|exp_avg| * 1e6" in prediction("02.update_size").explanation


def test_the_story_step_is_thousands_where_no_weight_reaches_a_tenth():
    story = experiments.bench()
    weight = story.snapshot()[experiments.ENCODER]
    story.backward()
    state = story.step(experiments.adam(lr=1e-3)).state[story.parameter(experiments.ENCODER)]
    assert state["exp_avg_sq"].abs().max().item() == 0
    assert 1e3 <= state["exp_avg"].abs().max().item() * first_step_factor() < 1e4
    assert weight.abs().max().item() < 0.1
