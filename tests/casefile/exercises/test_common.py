"""What notebook 09's checkers share: hidden models that are what their makers say, built without
touching the learner's random numbers."""

from __future__ import annotations

import torch
from torch import nn

from course.casefile.exercises import common


def test_a_pointwise_conv_in_channels_last_is_contiguous_yet_not_row_major():
    pointwise = common._channels_last(last_kernel=1)[2].weight  # a 1x1 conv in channels_last
    assert pointwise.is_contiguous() and pointwise.stride() != (8, 1, 1, 1)  # not row-major


def test_hidden_layers_leave_the_learners_random_numbers_alone():
    before = torch.random.get_rng_state()
    common._layer(nn.Linear, 4, 3)
    assert torch.equal(torch.random.get_rng_state(), before)
