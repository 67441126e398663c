"""06.output_placeholder: every family and layout, the block's end, and a failing graph."""

from __future__ import annotations

import torch

from course.exercises import check
from course.kernels.exercises.placeholder.redesign import redesign_outputs
from tests.corpus import corpus_tests
from tests.kernels.exercises.placeholder.corpus_redesign import CORPORA

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_a_scaffold_is_not_attempted():
    class Scaffold:
        def __init__(self, tensor):
            raise NotImplementedError("your code here")

    verdict = check("06.output_placeholder", Scaffold)
    assert "not attempted" in verdict.message and not verdict.attempted


def test_empty_bodies_are_not_attempted():
    class Emptied:
        def __init__(self, tensor):
            pass

        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc_value, traceback):
            pass

    verdict = check("06.output_placeholder", Emptied)
    assert "not attempted" in verdict.message and not verdict.attempted


def test_the_hidden_outputs_hold_float16_and_bfloat16_ones_not_contiguous():
    low = [output for _, output in redesign_outputs() if output.dtype != torch.float32]
    assert {output.dtype for output in low} == {torch.float16, torch.bfloat16}
    assert not any(output.is_contiguous() for output in low)
