"""How the encoder got its strides: the model's tensors as layout rows, step by step."""

from __future__ import annotations

import torch

from course.model.encoder_layout import encoder_layouts, layout_row


def test_encoder_layouts_show_the_inherited_stride():
    rows = {row["tensor"]: row for row in encoder_layouts(d_model=8, n_features=12)}
    assert rows["decoder.weight.T.clone()"]["stride"] == (1, 12)
    assert rows["decoder.weight.T.clone()"]["storage"] == "new (a copy)"
    assert rows["Adam state['exp_avg_sq']"]["stride"] == (1, 12)
    assert rows["torch.zeros(encoder.weight.shape)"]["contiguous"] is True
    assert rows["decoder.weight.T"]["storage"] == "shared (a view)"


def test_encoder_layouts_leave_the_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    encoder_layouts(d_model=8, n_features=12)
    assert torch.equal(torch.rand(3), expected)


def test_layout_row_tells_a_view_from_a_copy():
    base = torch.zeros(2, 3)
    assert layout_row("base", base, base)["storage"] == "the original"
    assert layout_row("view", base.T, base)["storage"] == "shared (a view)"
    assert layout_row("copy", base.T.contiguous(), base)["storage"] == "new (a copy)"
    assert layout_row("alone", base)["storage"] == "-"
    assert "channels_last" in layout_row("4-d", torch.zeros(1, 2, 3, 4))
