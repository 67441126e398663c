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


def _a_frozenset(model):
    tensors = [*model.named_parameters(), *model.named_buffers()]
    return frozenset(name for name, t in tensors if not t.is_contiguous())


def _a_sorted_tuple_by_loops(model):
    found = []
    for name, p in model.named_parameters():
        if not p.is_contiguous():
            found.append(name)
    for name, b in model.named_buffers():
        if not b.is_contiguous():
            found.append(name)
    return tuple(sorted(found))


def _a_set_per_module(model):
    found = set()
    for prefix, module in model.named_modules():
        own = [*module.named_parameters(recurse=False), *module.named_buffers(recurse=False)]
        found |= {f"{prefix}.{n}" if prefix else n for n, t in own if not t.is_contiguous()}
    return found


def _own_stride_rule(model):
    def contiguous(t):
        expected = 1
        for size, stride in reversed(list(zip(t.shape, t.stride(), strict=True))):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    tensors = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    return [name for name, t in tensors.items() if not contiguous(t)]


def _printing_each_tensor(model):
    found = []
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        print(name, tuple(t.shape), t.stride(), t.is_contiguous())
        if not t.is_contiguous(memory_format=torch.contiguous_format):
            found.append(name)
    return found


@pytest.mark.parametrize(
    "suspects",
    [
        _a_frozenset,
        _a_sorted_tuple_by_loops,
        _a_set_per_module,
        _own_stride_rule,
        _printing_each_tensor,
    ],
)
def test_right_suspects_in_other_styles_pass(suspects):
    verdict = check("09.suspects", suspects)
    assert verdict.passed, verdict.message
