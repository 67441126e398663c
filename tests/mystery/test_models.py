"""The mystery's user code: seeded models and data, their recipes, and the habits' tensors."""

from __future__ import annotations

import functools
import re

import pytest
import torch

from course.mystery.case import user_code
from course.mystery.generate import CaseSpec, generate
from course.mystery.models import (
    MLP,
    Attention,
    BagOfWords,
    ConvNet,
    compact,
    keep_even_inputs,
    linear,
    load_flax,
    load_packed,
    load_tflite,
    reviews,
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
    transposed = load_flax((3, 5), _gen(), "cpu")
    assert transposed.shape == (3, 5) and transposed.stride() == (1, 3)
    even = keep_even_inputs((3, 5), _gen(), "cpu")
    assert even.shape == (3, 5) and even.stride() == (10, 2)


def test_a_tflite_export_gives_channels_last_weights_with_the_same_values():
    model = ConvNet(_gen(), (2, 3), size=6)
    before = model.conv2.weight.detach().clone()
    load_tflite(model)
    assert model.conv2.weight.is_contiguous(memory_format=torch.channels_last)
    assert not model.conv2.weight.is_contiguous() and torch.equal(model.conv2.weight, before)
    images = torch.randn(2, 1, 6, 6, generator=_gen())
    hidden = model.conv2(model.conv1(images))  # the second convolution writes channels_last
    assert hidden.is_contiguous(memory_format=torch.channels_last) and not hidden.is_contiguous()


def test_compact_puts_the_model_in_bfloat16():
    model = compact(MLP(_gen(), (2, 3, 4)))
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}


def test_load_packed_rehomes_parameters_as_views_of_one_storage_with_their_values():
    model = MLP(_gen(), (2, 3, 4))
    before = [p.detach().clone() for p in (model.layers[0].weight, model.layers[1].weight)]
    load_packed(model, ("layers.0.weight", "layers.1.weight"))
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


# How a reader would spell each condition these habits create, in code or in a name.
_TELLS = {
    "transposed": ("transposed",),
    "step-sliced": ("step_sliced", "step-sliced"),
    "storage-offset": ("storage_offset", "storage-offset", "one_buffer", "flat buffer"),
    "bfloat16": ("bfloat16", "bf16"),
    "channels-last": ("channels_last", "channels-last", "memory_format"),
}
_REWRITTEN = ("import", "even-inputs", "flat-buffer", "bfloat16", "channels-last")


@functools.cache
def _specs() -> tuple[CaseSpec, ...]:
    """The first 1500 seeds' cases, generated once for the tests below: generate's own cache
    keeps the last 512, so each test's scan made them all again. Shared as generate shares its
    cached ones: frozen dataclasses, which the tests only read."""
    return tuple(map(generate, range(1500)))


@pytest.mark.parametrize("habit", _REWRITTEN)
def test_the_users_code_does_not_spell_the_condition_its_habit_creates(habit):
    """Note [The user's code does not name the trigger]: the property is found by looking at
    tensors, not by reading a name; a sample of seeds of each such habit."""
    specs = [s for s in _specs() if s.design.habit == habit][:6]
    assert len(specs) >= 3
    for spec in specs:
        code = user_code(spec.design).lower()
        for kind in spec.bug.trigger.kinds:
            for tell in _TELLS.get(kind, (kind,)):
                assert not re.search(rf"\b{re.escape(tell)}\b", code), (spec.seed, tell)


@pytest.mark.parametrize(
    ("habit", "option"),
    [
        ("inplace-relu", "inplace=True"),
        ("clip", "clip="),
        ("softcap", "softcap="),
        ("query-bias", "query_bias=True"),
        ("foreach", "foreach=True"),
    ],
)
def test_an_option_habit_is_as_often_set_where_it_is_not_the_trigger(habit, option):
    """Note [Habits that are not the trigger]: reading which option is set does not tell the
    case's habit; the options come in one order whichever habit set them."""
    specs = _specs()[:800]
    own = [spec for spec in specs if spec.design.habit == habit]
    assert own and all(option in spec.design.constructor for spec in own)
    families = {spec.design.family for spec in own}
    others = [s for s in specs if s.design.habit != habit and s.design.family in families]
    share = sum(option in spec.design.constructor for spec in others) / len(others)
    assert 0.35 < share < 0.65
    calls = [spec.design.constructor for spec in specs if option in spec.design.constructor]
    assert len({call.index(option) < call.index("optimizer=") for call in calls}) == 1


def test_no_case_spells_its_condition_more_often_than_cases_without_it():
    """Over every habit: a condition's spelling (foreach=True for the foreach path) is absent
    from a case's code, or as common in cases of the family where it is not the condition."""
    specs = _specs()[:400]
    codes = {spec.seed: user_code(spec.design).lower() for spec in specs}
    tells = _TELLS | {"foreach": ("foreach=true",)}
    for spec in specs:
        for kind in spec.bug.trigger.kinds:
            for tell in tells.get(kind, (kind,)):
                if not re.search(rf"\b{re.escape(tell)}\b", codes[spec.seed]):
                    continue
                elsewhere = [
                    re.search(rf"\b{re.escape(tell)}\b", codes[other.seed]) is not None
                    for other in specs
                    if other.design.family == spec.design.family
                    and kind not in other.bug.trigger.kinds
                ]
                assert sum(elsewhere) >= 0.35 * len(elsewhere), (spec.seed, tell)
