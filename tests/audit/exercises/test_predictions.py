"""08.which_layouts runs the real audit."""

from __future__ import annotations

from course.exercises import predict, reveal


def test_the_layout_prediction_runs_the_real_audit():
    predict("08.which_layouts", "every layout")
    # whitespace joined: the reveal is wrapped to the cell's width, wherever the line breaks fall
    # (the learner's earlier prediction, if one was committed, makes the line longer)
    shown = " ".join(str(reveal("08.which_layouts")).split())
    assert "the experiment says 'every non-contiguous output'" in shown
