"""The suspects of notebook 04's last prediction, and the experiment that decides it."""

from __future__ import annotations

import torch

from course import emps
from course.layout.suspects import (
    freeze_rows,
    frozen_on_mps,
    frozen_suspects,
    suspect_rows,
    suspects,
)


def test_exactly_the_non_contiguous_suspect_freezes_on_the_story_profile():
    assert frozen_suspects() == ["torch.randn(4, 6).T.clone()"]
    assert [label for label, t in suspects() if not t.is_contiguous()] == frozen_suspects()


def test_a_later_profile_updates_it():
    tensor = dict(suspects())["torch.randn(4, 6).T.clone()"]
    assert frozen_on_mps(tensor) and not frozen_on_mps(tensor, emps.TORCH_2_4)


def test_the_table_before_the_prediction_shows_layouts_not_the_answer():
    rows = suspect_rows()
    assert len(rows) == 7 and set(rows[0]) == {"suspect", "shape", "stride", "offset"}
    assert rows[1]["offset"] == 8 and rows[2]["stride"] == (1, 6)


def test_the_experiment_table_says_which_froze():
    rows = {row["suspect"]: row["after one Adam step"] for row in freeze_rows()}
    assert list(rows.values()).count("FROZEN") == 1


def test_suspects_leave_the_global_rng_alone():
    torch.manual_seed(7)
    expected = torch.rand(2)
    torch.manual_seed(7)
    suspects()
    assert torch.equal(torch.rand(2), expected)
