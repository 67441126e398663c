"""Notebook 04's predictions: committed once, before the experiment that answers them.

04.transpose_writes (does writing into x.T change x?), 04.clone_layout (which strides does the
story's `decoder.weight.T.clone()` get?) and 04.find_mps_bug (which of seven suspects would
freeze as an Adam parameter on the story's MPS). Each outcome runs the real experiment, so a
reveal can never disagree with what the learner's own run shows. find_mps_bug is a choice from
a list, so it is a prediction, not a check a retry would pass.
"""

from __future__ import annotations

import torch

from course.exercises import Prediction, register_prediction
from course.layout.suspects import frozen_suspects, suspects


def _transpose_writes() -> str:
    x = torch.arange(24).view(4, 6)
    x.T[0, 1] = 100
    return "yes: x[1, 0] becomes 100" if x[1, 0].item() == 100 else "no: x.T is a copy"


def _clone_layout() -> str:
    weight = torch.zeros(384, 1536)  # the decoder weight's shape
    clone = weight.T.clone()
    return "transposed, like .T" if clone.stride() == (1, 1536) else "row-major (contiguous)"


def _frozen_suspect() -> str:
    frozen = frozen_suspects()
    return frozen[0] if len(frozen) == 1 else f"{len(frozen)} suspects froze: {frozen}"


register_prediction(
    Prediction(
        "04.transpose_writes",
        "y = x.T; y[0, 1] = 100. Does x change?",
        ("yes: x[1, 0] becomes 100", "no: x.T is a copy"),
        _transpose_writes,
        "x.T is a view: same storage, swapped strides. Element (0, 1) of the view is the "
        "storage slot of x[1, 0].",
        answer_words=("moves no data", "is a view", "same storage", "shares its storage"),
    )
)
register_prediction(
    Prediction(
        "04.clone_layout",
        "The story's init: encoder.weight = decoder.weight.T.clone(). Which strides does the clone "
        "get?",
        ("row-major (contiguous)", "transposed, like .T"),
        _clone_layout,
        "clone() defaults to memory_format=torch.preserve_format: a dense layout is copied as "
        "it is, so the new tensor keeps .T's strides (1, 1536).",
        answer_words=(
            "produced that stride",
            "kept the transposed stride",
            "keeps the layout",
            "kept the layout",
            "preserves the layout",
            "preserve_format",
            "keeps the strides",
        ),
    )
)
register_prediction(
    Prediction(
        "04.find_mps_bug",
        "As Adam parameters on PyTorch 2.2.1 / macOS 14 MPS, which of the seven suspects would "
        "silently freeze?",
        tuple(label for label, _ in suspects()),
        _frozen_suspect,
        "Only a non-contiguous parameter loses Adam's writes on that version, and only one "
        "suspect is non-contiguous: torch.randn(4, 6).T.clone(), which kept .T's stride (1, 6), "
        "the story's encoder in small. The others only look odd: a storage offset (rows 2-4) "
        "says where a tensor starts, not how it is laid out; the size-1 dim of "
        "torch.randn(1, 6).T is never stepped along, so its stride never counts; .contiguous() "
        "and reshape of a contiguous tensor give row-major layouts; permute(0, 1, 2) changes "
        "nothing. Notebooks 05 and 06 find out why the non-contiguous one loses the writes.",
    )
)
