"""The mystery's user code: seeded models and data, their recipes, and the habits' tensors."""

from __future__ import annotations

import torch

from course.mystery.models import (
    MLP,
    Attention,
    BagOfWords,
    ConvNet,
    keep_even_inputs,
    linear,
    load_transposed,
    reviews,
    share_one_buffer,
    split,
    split_heads,
    stripes,
    teacher_blobs,
    teacher_sequences,
)


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_linear_draws_fan_in_weights_from_its_generator_only():
    before = torch.get_rng_state()
    layer = linear(16, 3, _gen())
    assert torch.equal(torch.get_rng_state(), before)  # the learner's global RNG untouched
    assert torch.equal(layer.weight, linear(16, 3, _gen()).weight)
    assert not torch.equal(layer.weight, linear(16, 3, _gen(1)).weight)
    assert layer.weight.abs().max() <= 16**-0.5 and not layer.bias.any()


def test_split_keeps_the_first_samples_for_training():
    data = split(torch.arange(5), torch.arange(5) * 10, 3)
    assert data.x.tolist() == [0, 1, 2] and data.y_test.tolist() == [30, 40]


def test_the_recipe_picks_fused_over_foreach():
    model = MLP(_gen(), (3, 2), lr=0.5, foreach=True)
    options = model.configure_optimizer().param_groups[0]
    assert options["lr"] == 0.5 and options["foreach"] is True and not options.get("fused")
    model.fused = True
    assert model.configure_optimizer().param_groups[0]["fused"] is True


def test_an_mlp_computes_in_its_weights_dtype_and_answers_in_float32():
    x = torch.randn(2, 4, generator=_gen(1))
    exact = MLP(_gen(), (4, 5, 3))(x)
    out = MLP(_gen(), (4, 5, 3)).to(torch.bfloat16)(x)
    assert out.shape == (2, 3) and out.dtype == torch.float32
    assert torch.allclose(out, exact, atol=0.05) and not torch.equal(out, exact)  # bf16 rounding


def test_the_convnet_zeroes_the_border_and_clips_in_place():
    model = ConvNet(_gen(), (2, 3), size=6, clip=0.5)
    h = torch.ones(1, 2, 6, 6)
    assert model.mask_border(h) is h and h[..., 0, :].eq(0).all() and h[..., 1:-1, 1:-1].eq(1).all()
    big = torch.full((2,), 9.0)
    assert model.clip_activations(big).tolist() == [0.5, 0.5]
    assert model(torch.randn(2, 1, 6, 6, generator=_gen())).shape == (2, 4)


def test_split_heads_is_a_view_with_heads_before_tokens():
    t = torch.arange(2 * 3 * 8.0).view(2, 3, 8)
    heads = split_heads(t, 4)
    assert heads.shape == (2, 4, 3, 2) and heads.data_ptr() == t.data_ptr()
    assert heads[1, 2, 0].tolist() == t[1, 0, 4:6].tolist()


def test_attention_is_causal_a_token_ignores_later_tokens():
    model = Attention(_gen(), width=8, heads=2, tokens=4, query_bias=True, softcap=5.0)
    x = torch.randn(1, 4, 8, generator=_gen(1))
    changed = x.clone()
    changed[0, 3] += 1.0
    with torch.no_grad():
        a, b = model(x), model(changed)
    assert a.shape == (1, 4) and torch.equal(a[0, :3], b[0, :3]) and a[0, 3] != b[0, 3]


def test_a_bag_of_words_scores_each_review():
    model = BagOfWords(_gen(), vocab=6, dim=3)
    assert model(torch.ones(5, 6)).shape == (5,)


def test_the_habits_weights_have_the_shape_asked_for_and_their_unusual_strides():
    transposed = load_transposed((3, 5), _gen(), "cpu")
    assert transposed.shape == (3, 5) and transposed.stride() == (1, 3)
    even = keep_even_inputs((3, 5), _gen(), "cpu")
    assert even.shape == (3, 5) and even.stride() == (10, 2)


def test_share_one_buffer_rehomes_parameters_as_views_of_one_storage_with_their_values():
    model = MLP(_gen(), (2, 3, 4))
    before = [p.detach().clone() for p in (model.layers[0].weight, model.layers[1].weight)]
    share_one_buffer(model, ("layers.0.weight", "layers.1.weight"))
    after = [model.layers[0].weight, model.layers[1].weight]
    assert after[0].untyped_storage().data_ptr() == after[1].untyped_storage().data_ptr()
    assert all(torch.equal(a, b) for a, b in zip(after, before, strict=True))


def test_the_datasets_are_seeded_and_split_with_unused_slots_left_empty():
    blobs = teacher_blobs(_gen(), 8, features=4, classes=3, unused=1)
    assert blobs.x.shape == (6, 4) and blobs.x_test.shape == (2, 4)
    assert not blobs.x[:, -1].any() and blobs.y.max() < 3
    assert torch.equal(blobs.x, teacher_blobs(_gen(), 8, 4, 3, 1).x)
    words = reviews(_gen(), 8, vocab=10, unused=2)
    assert not words.x[:, -2:].any() and words.x.sum(1).eq(12).all()
    images = stripes(_gen(), 6, size=5)
    assert images.x.shape == (3, 1, 5, 5) and not images.x[..., 0, :].any()
    teacher = Attention(_gen(), width=4, heads=2, tokens=3)
    sequences = teacher_sequences(_gen(1), 8, teacher, width=4)
    assert sequences.x.shape == (6, 3, 4) and sequences.y.shape == (6, 3)
