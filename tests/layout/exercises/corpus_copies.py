"""04.make_contiguous: the reference, and wrong ways to make a tensor contiguous, by flaw."""

from __future__ import annotations

import torch

from tests.corpus import Corpus


def make_contiguous_reference():
    def make_contiguous(x):
        return x.contiguous()

    return make_contiguous


def _row_major_strides(shape):
    strides, running = [], 1
    for size in reversed(shape):
        strides.insert(0, running)
        running *= size
    return tuple(strides)


def _relabelled():
    def make_contiguous(x):
        return x.as_strided(x.shape, _row_major_strides(x.shape))

    return make_contiguous


def _strict_strides_else_forced_copy():
    def make_contiguous(x):
        if x.stride() == _row_major_strides(x.shape):
            return x
        return x.clone(memory_format=torch.contiguous_format)

    return make_contiguous


def _into_the_input():
    def make_contiguous(x):
        x.data = x.contiguous()
        return x

    return make_contiguous


def _copy_only_when_needed(x):
    return x if x.is_contiguous() else x.clone(memory_format=torch.contiguous_format)


CORPORA = (
    Corpus(
        "04.make_contiguous",
        make_contiguous_reference,
        wrong={
            "clone()": (lambda: lambda x: x.clone(), "a copy that keeps the input's layout"),
            "clone(memory_format=torch.contiguous_format)": (
                lambda: lambda x: x.clone(memory_format=torch.contiguous_format),
                "a wasted copy",
            ),
            "reshape to the same shape": (
                lambda: lambda x: x.reshape(x.shape),
                "a view of the input",
            ),
            "view(-1).view(shape)": (
                lambda: lambda x: x.view(-1).view(x.shape),
                "view() never copies",
            ),
            "torch.tensor(x.tolist())": (
                lambda: lambda x: torch.tensor(x.tolist()),
                "keeps the dtype",
            ),
            "contiguous when the last stride is 1": (
                lambda: lambda x: x if x.dim() == 0 or x.stride()[-1] == 1 else x.contiguous(),
                "you returned the input itself",
            ),
            "as_strided with row-major strides": (_relabelled, "only relabels memory"),
            "x.data replaced": (_into_the_input, "changed its"),
            "exact row-major strides, else a forced copy": (
                _strict_strides_else_forced_copy,
                "a size-1 dim's stride never counts",
            ),
            "only 2-d inputs": (
                lambda: lambda x: x.contiguous() if x.dim() == 2 else x,
                "its number of dims",
            ),
            "to(memory_format=...)": (
                lambda: lambda x: x.to(memory_format=torch.contiguous_format),
                "x.to(memory_format=...) returns its input",
            ),
            "copied into a float32 buffer": (
                lambda: lambda x: torch.empty(x.shape).copy_(x),
                "keeps the dtype",
            ),
            "0-d and 1-d inputs left alone": (  # "a vector is one row: never out of order"
                lambda: lambda x: x if x.dim() < 2 else x.contiguous(),
                "you returned the input itself",
            ),
            "zero_ on the input": (lambda: torch.Tensor.zero_, "changed its transposed"),
        },
        right={"a copy only when needed": lambda: _copy_only_when_needed},
    ),
)
