"""Notebook 07's predictions: where the naive C++ kernel's values land, and how many cache lines a
row of a transposed matrix costs.

Each outcome runs its experiment: `07.predict_scramble` the naive kernel as modelled in Python
(no compiler needed) on a transposed (2, 3) output, `07.cache_lines` the addresses of 16
consecutive elements along a row of the story's transposed layout, grouped into 64-byte lines.
The scramble's choices are out.tolist() written out, each what one reading of the strides gives:
the learner still commits the numbers before the kernel runs, and picks them from paper.
"""

from __future__ import annotations

import torch

from course.exercises import Prediction, register_prediction
from course.kernels.cpp.harness import naive_model, scramble_inputs


def _scramble_outcome() -> str:
    return str(naive_model(*scramble_inputs(2, 3)).tolist())


def _cache_lines_outcome() -> str:
    transposed = torch.zeros(1024, 1024).t()  # the story's layout: stride (1, 1024)
    addresses = [transposed[0, j].data_ptr() for j in range(16)]  # 16 steps along a row
    lines = len({address // 64 for address in addresses})  # 64-byte cache lines
    return "1: they share one line" if lines == 1 else f"{lines}: one line per element"


register_prediction(
    Prediction(
        "07.predict_scramble",
        "out = torch.zeros(3, 2).t() has shape (2, 3) and stride (1, 2); t1 = "
        "torch.arange(6.).reshape(2, 3); t2 is ones. What does the naive kernel leave in "
        "out.tolist()?",
        (
            "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]",  # torch's answer: the strides followed
            "[[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]",  # slot i gets i; out[r][c] is slot r + 2c
            "[[0.0, 3.0, 1.0], [4.0, 2.0, 5.0]]",  # the same permutation, the other way round
            "[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]",  # 06's lost write
        ),
        _scramble_outcome,
        "The naive kernel writes t1's memory slot i (the value i) into out's memory slot i and "
        "reads nothing about strides; out is transposed, so out[r][c] sits at slot r + 2 * c, "
        "and reading it row by row gives 0, 2, 4, then 1, 3, 5. Unlike 06's lost write, nothing "
        "is copied away: every slot of out is written.",
        answer_words=("[0.0, 2.0, 4.0]", "[1.0, 3.0, 5.0]", "[0., 2., 4.]", "[1., 3., 5.]"),
    )
)
register_prediction(
    Prediction(
        "07.cache_lines",
        "Reading 16 consecutive elements along a row of a transposed (1024, 1024) float32 "
        "matrix: how many 64-byte cache lines does the CPU fetch?",
        ("1: they share one line", "16: one line per element"),
        _cache_lines_outcome,
        "Along a row of a transposed matrix consecutive elements are 1024 floats (4 kB) apart, "
        "so each one sits in its own cache line, and the other 15 floats of that line are "
        "wasted unless the line is still in cache when the loop comes back for them.",
    )
)
