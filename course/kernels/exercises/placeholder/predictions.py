"""Notebook 06's predictions: where 2.2.1's write goes, and whether macOS 15 still loses it.

Each outcome runs the experiment on the emulated device, so a reveal never disagrees with what
the learner's own run shows.
"""

from __future__ import annotations

import torch

from course import emps
from course.emps.mps_kernels import same_bits
from course.exercises import Prediction, register_prediction
from course.kernels.placeholder_lab import layouts, run_addcmul


def _lost_write_outcome() -> str:
    output = layouts()["transposed"]
    result, expected, _ = run_addcmul(emps.write_through_placeholder, output)
    if same_bits(result, expected):
        return "the right result"
    if torch.equal(result, output):
        return "its old values, unchanged"
    return "zeros" if not result.any() else "NaN or garbage"


def _macos15_outcome() -> str:
    output = layouts()["transposed"]
    result, expected, _ = run_addcmul(emps.write_through_placeholder, output, profile=emps.MACOS15)
    return "no: the write arrives" if same_bits(result, expected) else "yes: still lost"


register_prediction(
    Prediction(
        "06.lost_write",
        "PyTorch 2.2.1, macOS 14: out is transposed and the broken kernel runs "
        "out.addcmul_(t1, t2). What does out hold afterwards?",
        ("the right result", "its old values, unchanged", "zeros", "NaN or garbage"),
        _lost_write_outcome,
        "The Placeholder gathered a contiguous copy of out, the graph computed the right answer "
        "into that copy, and nothing copied it back: out keeps its old values. Nothing fails.",
        answer_words=("unchanged", "never changed", "old values", "untouched"),
    )
)
register_prediction(
    Prediction(
        "06.macos15",
        "On macOS 15 MPSGraph reads and writes strided buffers. Does the same broken kernel "
        "(no copy back) still lose the write to a transposed output there?",
        ("yes: still lost", "no: the write arrives"),
        _macos15_outcome,
        "With strided buffers the Placeholder makes no copy: the graph writes into out itself. "
        "The bug needed both a kernel that forgot the copy back and a graph that needed one.",
        answer_words=("the write arrives", "makes no copy", "writes into out itself"),
    )
)
