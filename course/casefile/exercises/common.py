"""What notebook 09's checkers share: hidden models that leave the learner's RNG alone, and the
course's own checks an answer may not call.

The suspects and state_suspects checkers both build the story's SAE (`_sae`), sliced and
channels_last models (`_sliced`, `_channels_last`) from a private generator (`_layer`,
`_batch`), and both refuse an
answer that calls the checklist instead of reading the tensors (`COURSE_CHECKS`, `_borrowed`).
"""

from __future__ import annotations

import torch
from torch import nn

from course.casefile.checklist import checklist, parameter_findings, state_findings
from course.exercises import Verdict, failed
from course.model.sae import TopKSAE

# --- hidden models, built without the learner's global RNG ------------------------------------


def _batch(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))


def _layer(cls: type[nn.Module], *args: int) -> nn.Module:
    """An nn.Linear or nn.Conv2d filled from a private generator instead of its own init, which
    draws from the global RNG: checking an answer must not change the learner's random numbers."""
    layer = nn.utils.skip_init(cls, *args)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(_batch(*p.shape))
    return layer


def _sae(init: str = "transposed", n_features: int = 16) -> TopKSAE:
    """The story's SAE (its encoder a clone of a transposed view), or the fixed one."""
    return TopKSAE(d_model=8, n_features=n_features, k=4, init=init)


def _sliced() -> nn.Module:
    layer = _layer(nn.Linear, 2, 4)
    layer.weight = nn.Parameter(_batch(4, 6)[:, :2])  # stride (6, 1): last stride 1
    return layer


def _channels_last(last_kernel: int = 3) -> nn.Module:
    net = nn.Sequential(_layer(nn.Conv2d, 3, 8, 3), nn.ReLU(), _layer(nn.Conv2d, 8, 4, last_kernel))
    return net.to(memory_format=torch.channels_last)  # how conv nets get it in practice


# the course's own functions that answer 09.suspects and 09.state_suspects: calling one is borrowing
COURSE_CHECKS = {f.__name__: f for f in (checklist, parameter_findings, state_findings)}


def _borrowed(used: list[str]) -> Verdict:
    return failed(
        f"your answer calls {used[0]}(), part of the course's own checklist: write the rule "
        "yourself, from the tensors"
    )
