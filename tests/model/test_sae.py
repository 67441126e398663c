"""The story's SAE: its shapes and strides, nn.Linear's own init from a private generator."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from course.errors import CourseError
from course.model.sae import TopKSAE


def test_transposed_init_keeps_the_transposed_strides():
    model = TopKSAE(d_model=8, n_features=16, k=4)
    assert model.encoder.weight.shape == (16, 8) and model.encoder.weight.stride() == (1, 16)
    assert not model.encoder.weight.is_contiguous()
    contiguous = TopKSAE(d_model=8, n_features=16, k=4, init="contiguous")
    assert contiguous.encoder.weight.is_contiguous()
    assert torch.equal(contiguous.encoder.weight, model.encoder.weight)  # same values


def test_init_draws_what_nn_linear_draws_after_manual_seed():
    torch.manual_seed(3)
    nn.Linear(8, 16)  # the encoder: drawn first, as TopKSAE draws from its own generator
    decoder = nn.Linear(16, 8)
    expected = decoder.weight.detach() / decoder.weight.detach().norm(dim=0, keepdim=True)
    model = TopKSAE(d_model=8, n_features=16, k=4, seed=3)
    assert torch.equal(model.decoder.weight.detach(), expected)
    assert torch.equal(model.encoder.weight.detach(), expected.T)
    assert not model.encoder.bias.any() and not model.decoder.bias.any()


def test_building_a_model_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    TopKSAE(d_model=8, n_features=16, k=4, seed=7)
    assert torch.equal(torch.rand(3), expected)


def test_forward_keeps_k_codes_per_sample():
    model = TopKSAE(d_model=8, n_features=16, k=3)
    x = torch.randn(5, 8)
    codes = model.encode(x)
    assert ((codes != 0).sum(dim=1) <= 3).all()
    assert model(x).shape == (5, 8)


def test_aux_loss_is_a_finite_scalar_with_gradients_for_the_encoder():
    model = TopKSAE(d_model=8, n_features=16, k=3)
    x = torch.randn(5, 8)
    loss = model.aux_loss(x, model(x))
    assert loss.dim() == 0 and math.isfinite(loss.item())
    loss.backward()
    assert model.encoder.weight.grad.abs().sum() > 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d_model": 0}, "d_model=0"),
        ({"n_features": -1}, "n_features=-1"),
        ({"k": 0}, "k=0 .*from 1 to 1536"),
        ({"k": 2000}, "k=2000"),
        ({"seed": "x"}, "seed='x'"),
        ({"seed": True}, "seed=True"),
        ({"d_model": 10**6}, "d_model=1000000"),
        ({"init": "sideways"}, "init='sideways'"),
    ],
)
def test_bad_arguments_name_the_value_and_what_is_allowed(kwargs, match):
    with pytest.raises(CourseError, match=match):
        TopKSAE(**kwargs)


def test_a_model_too_large_for_memory_is_refused_by_its_shape():
    with pytest.raises(CourseError, match=r"\(n_features, d_model\)=\(16000, 16000\)"):
        TopKSAE(d_model=16_000, n_features=16_000)
