"""The reference fixes: each is a `patch(model) -> model` that removes its habit's property
(whether it also removes the planted bug: tests/mystery/test_families.py)."""

from __future__ import annotations

import random

import pytest
import torch
from torch import nn

from course.mystery.families import SITES, design
from course.mystery.fixes import reference_fix
from course.mystery.scenarios import compiled


def _patch(habit: str, family: str = "mlp"):
    """The reference fix for the first site with this habit (and family), compiled."""
    site = next(s for s in SITES if s.habit == habit and s.family == family)
    drawn = design(random.Random(0), site, site.kinds[0], site.ops[0])
    return compiled(reference_fix(drawn), "fix", {})["patch"]


def _layers(*widths: int) -> nn.Module:
    model = nn.Module()
    model.layers = nn.ModuleList(
        nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:], strict=True)
    )
    return model


@pytest.mark.parametrize("site", SITES, ids=[f"{s.family}-{s.habit}" for s in SITES])
def test_every_fix_is_a_documented_patch_function_that_returns_the_model(site):
    source = reference_fix(design(random.Random(0), site, site.kinds[0], site.ops[0]))
    lines = source.splitlines()
    assert lines[0] == "def patch(model):" and lines[-1] == "    return model"
    assert lines[1].startswith('    """') and lines[1].endswith('"""') and len(lines[1]) > 20
    assert callable(compiled(source, "fix", {})["patch"])


def test_the_import_fix_stores_a_transposed_weight_row_by_row_with_the_same_values():
    model = _layers(4, 3, 2)
    transposed = torch.randn(3, 2).t()
    model.layers[1].weight = nn.Parameter(transposed)
    fixed = _patch("import")(model).layers[1].weight
    assert isinstance(fixed, nn.Parameter) and fixed.is_contiguous()
    assert torch.equal(fixed, transposed)


def test_the_flat_buffer_fix_gives_each_weight_a_storage_of_its_own():
    model = _layers(2, 2, 2, 2)
    buffer = torch.arange(8.0)
    model.layers[1].weight = nn.Parameter(buffer[:4].view(2, 2))
    model.layers[2].weight = nn.Parameter(buffer[4:].view(2, 2))
    model = _patch("flat-buffer")(model)
    first, second = model.layers[1].weight, model.layers[2].weight
    assert first.untyped_storage().data_ptr() != second.untyped_storage().data_ptr()
    assert torch.equal(torch.cat([first.flatten(), second.flatten()]), buffer)


def test_the_inplace_relu_fix_swaps_in_an_out_of_place_relu():
    model = _layers(2, 2, 2)
    model.act = nn.ReLU(inplace=True)
    assert not _patch("inplace-relu")(model).act.inplace
