"""Seven would-be Adam parameters, and the experiment that says which of them the story's MPS
freezes (notebook 04 asks the learner to predict it before running the experiment).

The suspects are built to tempt: a storage offset, a size-1 dim with an odd stride, copies made
by `.contiguous()` and `reshape`, an identity permute, beside one that really is laid out like
the story's encoder. The experiment does what the story did: one real Adam step on the emulated
MPS device, under a chosen version profile, and a bitwise comparison of before and after.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # emps is imported when the experiment runs, not with the lesson's tools
    from course.emps import Profile


def suspects() -> list[tuple[str, torch.Tensor]]:
    """(the code that made it, the tensor) for each suspect, from a private generator."""
    gen = torch.Generator().manual_seed(0)  # private: the learner's global RNG is untouched

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen)

    return [
        ("torch.randn(6, 4)", randn(6, 4)),
        ("torch.randn(8, 4)[2:5]", randn(8, 4)[2:5]),
        ("torch.randn(1, 6).T", randn(1, 6).T),
        ("torch.randn(4, 6).T.contiguous()", randn(4, 6).T.contiguous()),
        ("torch.randn(4, 6).T.clone()", randn(4, 6).T.clone()),
        ("torch.randn(6, 4).reshape(4, 6)", randn(6, 4).reshape(4, 6)),
        ("torch.randn(2, 3, 4).permute(0, 1, 2)", randn(2, 3, 4).permute(0, 1, 2)),
    ]


def suspect_rows() -> list[dict[str, object]]:
    """What a learner sees before predicting: how each was made, and its layout."""
    return [
        {
            "suspect": label,
            "shape": tuple(t.shape),
            "stride": t.stride(),
            "offset": t.storage_offset(),
        }
        for label, t in suspects()
    ]


def frozen_on_mps(tensor: torch.Tensor, profile: str | Profile | None = None) -> bool:
    """Experiment: does one Adam step leave this tensor bitwise unchanged on the emulated MPS
    device (under `profile`; None: the story's)?"""
    from course import emps

    with emps.use_profile(profile or emps.DEFAULT_PROFILE):
        param = torch.nn.Parameter(tensor.to(emps.DEVICE))
        param.grad = torch.ones_like(param)
        before = param.detach().inner.clone()
        torch.optim.Adam([param], lr=0.1).step()
        return torch.equal(before, param.detach().inner)


def freeze_rows(profile: str | Profile | None = None) -> list[dict[str, object]]:
    """The experiment on every suspect: updated or frozen after one Adam step."""
    return [
        {
            "suspect": label,
            "stride": t.stride(),
            "after one Adam step": "FROZEN" if frozen_on_mps(t, profile) else "updated",
        }
        for label, t in suspects()
    ]


def frozen_suspects(profile: str | Profile | None = None) -> list[str]:
    """The labels of the suspects the experiment leaves frozen."""
    return [label for label, t in suspects() if frozen_on_mps(t, profile)]
