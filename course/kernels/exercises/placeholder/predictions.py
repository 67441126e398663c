"""Notebook 06's predictions: where 2.2.1's lost write went, and why macOS 15 keeps it.

Each outcome runs the experiment on the emulated device, so a reveal never disagrees with what
the learner's own run shows.
"""

from __future__ import annotations

import torch

from course import emps
from course.emps.mps_kernels import same_bits
from course.exercises import Prediction, register_prediction
from course.kernels.placeholder_lab import layouts, run_addcmul

# Notebook 03 already showed what the learner sees (a transposed output keeps its old values on
# 2.2.1, nothing is lost on macOS 15); these two ask one level down: where the result went, and
# why macOS 15 keeps it. The kernel's record says both (its temporaries and whether one was lost).
DROPPED = "into a temporary copy of out, never copied back"


def _lost_write_outcome() -> str:
    output = layouts()["transposed"]
    result, expected, events = run_addcmul(emps.write_through_placeholder, output)
    if same_bits(result, expected):
        return "into out itself"
    if events[-1].temporaries and events[-1].lost_write:
        return DROPPED
    return (
        "nowhere: the graph never ran" if torch.equal(result, output) else "into the wrong elements"
    )


def _macos15_outcome() -> str:
    output = layouts()["transposed"]
    result, expected, events = run_addcmul(
        emps.write_through_placeholder, output, profile=emps.MACOS15
    )
    if not same_bits(result, expected):
        return "it does not: the write is lost there too"
    if events[-1].temporaries:
        return "macOS 15 copies every temporary back"
    return "no copy is made: the graph writes into out itself"


register_prediction(
    Prediction(
        "06.lost_write",
        "PyTorch 2.2.1, macOS 14: out is transposed and this kernel runs out.addcmul_(t1, t2). "
        "Notebook 03 showed that out keeps its old values, yet the graph runs. Where did its "
        "result go?",
        (
            "into out itself",
            DROPPED,
            "nowhere: the graph never ran",
            "into the wrong elements",
        ),
        _lost_write_outcome,
        "The Placeholder gathered a contiguous copy of out, the graph computed the right answer "
        "into that copy, and nothing copied it back. Nothing fails.",
        answer_words=("never copied back", "nothing copied it back", "into that copy"),
    )
)
register_prediction(
    Prediction(
        "06.macos15",
        "On macOS 15 MPSGraph reads and writes strided buffers, and notebook 03 showed that "
        "nothing is lost there. The kernel is the same one, with no copy back: why does the write "
        "arrive?",
        (
            "no copy is made: the graph writes into out itself",
            "macOS 15 copies every temporary back",
            "it does not: the write is lost there too",
        ),
        _macos15_outcome,
        "With strided buffers the Placeholder makes no copy: the graph writes into out itself. "
        "The bug needed both a kernel that forgot the copy back and a graph that needed one.",
        answer_words=("makes no copy", "writes into out itself"),
    )
)
