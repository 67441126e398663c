"""Notebook 07's prediction: how many cache lines a row of a transposed matrix costs.

`07.cache_lines` is answered by the experiment itself: the addresses of 16 consecutive elements
along a row of the story's transposed layout, grouped into 64-byte lines.
"""

from __future__ import annotations

import torch

from course.exercises import Prediction, register_prediction


def _cache_lines_outcome() -> str:
    transposed = torch.zeros(1024, 1024).t()  # the story's layout: stride (1, 1024)
    addresses = [transposed[0, j].data_ptr() for j in range(16)]  # 16 steps along a row
    lines = len({address // 64 for address in addresses})  # 64-byte cache lines
    return "1: they share one line" if lines == 1 else f"{lines}: one line per element"


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
