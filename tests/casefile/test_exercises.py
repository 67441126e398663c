"""Notebook 09's checkers: feedback names what the learner did, on hidden decoders and models."""

from __future__ import annotations

import torch

from course.exercises import check


def test_the_notebooks_own_fix_passes():
    def tie(decoder_weight):
        return decoder_weight.T.contiguous()

    assert check("09.tie_weights", tie).passed


def test_feedback_names_the_call_the_learner_used():
    def with_t(decoder_weight):
        return decoder_weight.t()

    def with_empty_like(decoder_weight):
        return torch.empty_like(decoder_weight.T).copy_(decoder_weight.T)

    def with_clone(decoder_weight):
        return decoder_weight.T.clone()

    assert "`.t()` returns a view" in check("09.tie_weights", with_t).message
    message = check("09.tie_weights", with_empty_like).message
    assert "empty_like()" in message and "clone()" not in message
    assert "clone() keeps the strides" in check("09.tie_weights", with_clone).message


def test_suspects_are_checked_beyond_the_story_model():
    def last_stride(model):
        return [n for n, p in model.named_parameters() if p.stride()[-1] != 1]

    def parameters_only(model):
        return [n for n, p in model.named_parameters() if not p.is_contiguous()]

    assert "[:, :2] slice" in check("09.suspects", last_stride).message
    assert "expanded buffer" in check("09.suspects", parameters_only).message
    assert "return a list" in check("09.suspects", lambda model: "encoder.weight").message
