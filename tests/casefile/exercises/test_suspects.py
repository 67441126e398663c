"""09.suspects: each known wrong rule fails with its cause, on hidden models; right rules written
other ways pass."""

from __future__ import annotations

import torch

from course.casefile.exercises.suspects import SUSPECT_CASES
from tests.casefile.exercises.corpus_suspects import CORPORA
from tests.corpus import corpus_tests

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_hidden_models_buffers_are_what_their_labels_say():
    scaled, _, _ = SUSPECT_CASES["a module with an expanded buffer"]
    assert "scale" not in scaled().state_dict()
    counted, _, _ = SUSPECT_CASES["a module with an integer buffer"]
    fired = counted().fired
    assert fired.dtype == torch.long and not fired.is_contiguous()
