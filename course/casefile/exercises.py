"""Notebook 09's exercises: tie the weights and find the suspects, checked on hidden models."""

from __future__ import annotations

import torch

from course.exercises import Exercise, failed, passed, register
from course.story.sae import TopKSAE

# --- exercises ---------------------------------------------------------------------------------


def _check_tie(fn) -> object:
    for label, decoder in {
        "contiguous": torch.randn(4, 6),
        "non-contiguous": torch.randn(6, 4).T,
    }.items():
        encoder = fn(decoder)
        if tuple(encoder.shape) != (6, 4) or not torch.equal(encoder, decoder.T):
            return failed(
                f"for a {label} decoder weight your encoder is not its transpose",
                list(encoder.shape),
                [6, 4],
            )
        if not encoder.is_contiguous():
            return failed(
                f"for a {label} decoder weight your encoder has stride "
                f"{encoder.stride()}: clone() preserves the transposed layout",
                encoder.stride(),
                (4, 1),
            )
        if encoder.untyped_storage().data_ptr() == decoder.untyped_storage().data_ptr():
            return failed(
                "your encoder shares memory with the decoder: training one would move the other",
                "a view",
                "a copy",
            )
    return passed("a contiguous copy of the transpose: Adam's state will be contiguous too")


def _reference_tie():
    def tie(decoder_weight):
        return decoder_weight.T.contiguous().clone()

    return tie


register(
    Exercise(
        "09.tie_weights",
        "Write tie(decoder_weight) -> the encoder's initial weight: the decoder's transpose, as a "
        "contiguous tensor of its own.",
        _check_tie,
        "`.T` is a view; `.clone()` keeps its strides; `.contiguous()` on a non-contiguous tensor "
        "copies into row-major order (and `.clone()` after it guarantees a copy).",
        _reference_tie,
        (lambda: lambda w: w.T.clone(), lambda: lambda w: w.T, lambda: lambda w: w.clone()),
    )
)


def _check_suspects(fn) -> object:
    cases = {"transposed": ["encoder.weight"], "contiguous": []}
    for init, expected in cases.items():
        model = TopKSAE(d_model=8, n_features=16, k=4, init=init)
        answer = fn(model)
        if not isinstance(answer, (list, tuple, set)):
            return failed(
                "suspects(model) should return a list of parameter names", answer, expected
            )
        yours = sorted(answer)
        if yours != expected:
            return failed(f"for the {init}-init SAE", yours, expected)
    return passed("you find the non-contiguous parameters: the first thing to check")


def _reference_suspects():
    def suspects(model):
        return [name for name, p in model.named_parameters() if not p.is_contiguous()]

    return suspects


register(
    Exercise(
        "09.suspects",
        "Write suspects(model) -> the names of the model's non-contiguous parameters.",
        _check_suspects,
        "model.named_parameters() yields (name, tensor) pairs; tensors know is_contiguous().",
        _reference_suspects,
        (
            lambda: lambda m: [n for n, p in m.named_parameters() if p.dim() > 1],
            lambda: (
                lambda m: [
                    n
                    for n, p in m.named_parameters()
                    if p.grad is not None and not p.is_contiguous()
                ]
            ),
        ),
    )
)
