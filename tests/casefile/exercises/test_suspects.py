"""09.suspects: each known wrong rule fails with its cause, on hidden models."""

from __future__ import annotations

import pytest
import torch

from course.casefile import exercises  # registers 09's exercises (without importing every lesson)
from course.exercises import check
from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
SUSPECT_CAUSES = (
    "last stride is 1",  # stride[-1] != 1
    "last stride is 1",  # strides not in decreasing order
    "a buffer",  # parameters only
    "is a contiguous parameter",  # every matrix
    "no .grad",  # only parameters with a gradient
    "is not a tensor of this model",  # the story's answer, hard-coded
    "of the submodule 'encoder'",  # top-level tensors only (recurse=False)
    "no transpose",  # transposes only
    "calls checklist()",  # the course's checklist, filtered
    "calls parameter_findings()",  # the checklist's parameter check
    "persistent=False (so not in state_dict())",  # state_dict() instead of the model's tensors
    "size-1 dimensions do not count",  # strides compared with the row-major ones
    "more than once",  # parameters and state_dict() together
    "a vector with stride 2 is not contiguous",  # matrices only
    "storage offset 8",  # a storage offset taken for a layout problem
    "no view, no gaps",  # views taken for the non-contiguous tensors (_base)
    "which it fills",  # tensors that do not fill their storage
    "contiguous in that memory format, but not is_contiguous()",  # channels_last counted as fine
    "check every dtype",  # floating-point tensors only
    "suspects raised TypeError: can't convert emps:0",  # numpy's C_CONTIGUOUS flag
)


CAUSES = {"09.suspects": SUSPECT_CAUSES}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_own_mistake(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_suspects_must_be_names():
    assert "return a list" in check("09.suspects", lambda model: "encoder.weight").message
    verdict = check("09.suspects", lambda model: list(model.parameters()))
    assert "names (strings), not the tensors" in verdict.message


def test_the_hidden_models_buffers_are_what_their_labels_say():
    assert "scale" not in exercises.suspects._Scaled().state_dict()
    fired = exercises.suspects._Counted().fired
    assert fired.dtype == torch.long and not fired.is_contiguous()
