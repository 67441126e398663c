"""Notebook 00's checkers: each plausible wrong answer is rejected, and told what is wrong."""

from __future__ import annotations

import pytest

from course.exercises import check, get
from course.start import exercises
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "00.on_emps": (
        "not on the emulated device yet",  # a CPU tensor
        "a list is not a tensor",  # a list of numbers
        "holds shapes but no data",  # the meta device
        "the device's name",  # the string 'emps'
        "a device, not a tensor",  # torch.device('emps')
        "a module, not a tensor",  # an nn.Linear moved to emps
        "forget the parentheses",  # torch.ones(3).to, not called
        "NumPy array",  # a NumPy array
    ),
    "00.device_type": (
        "without its index",  # str(t.device): 'emps:0'
        "the torch.device itself",  # t.device
        "on a tensor on emps",  # always 'cpu'
        "meta device",  # 'cpu' if t.is_cpu else 'emps'
        "not its device",  # t.type(): 'torch.FloatTensor'
        "returned None",  # printed, not returned
        "lower case",  # 'CPU'
        "the device's repr",  # "device(type='cpu')"
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_references_pass():
    assert all(check(name, get(name).reference()).passed for name in CAUSES)


def test_the_variants_cover_three_devices():
    assert {t.device.type for _, t in exercises._device_variants()} == {"cpu", "emps", "meta"}


def test_the_prediction_outcome_is_measured():
    assert exercises._mixed_devices() == "RuntimeError"
