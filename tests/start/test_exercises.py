"""Notebook 00's checkers: each plausible wrong answer is rejected, and told what is wrong."""

from __future__ import annotations

import re

import pytest
import torch

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
        "tensor's shape",  # .shape: a torch.Size, which is a tuple
        "plain number",  # .sum().item()
        "a tuple is not a tensor",  # (tensor,)
        "a dtype",  # .dtype
        "a bool",  # .is_cpu
        "storage",  # .untyped_storage()
        "keep what it returns",  # t.to('emps') called, its result dropped
        "printed as text",  # str(tensor): what print shows, not the tensor
        "not a list",  # [tensor]: the tensor inside a list
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
        "without its index (cuda:1",  # str(t.device).replace(":0", "")
        "cut short",  # str(t.device)[:4]: 'mps:'
        "mps device",  # meta, cpu, else emps: only the devices named so far
        "the device's index",  # t.get_device()
        "the device's index",  # t.device.index: None on the CPU, not a print
        "quotes",  # repr(t.device.type)
        "the tensor itself",  # t
        "lists the devices it knows",  # is_cuda, is_mps, is_meta, is_cpu, else 'emps'
        "cuda:10",  # str(t.device)[:-2]: two characters cut
        "cuda:10",  # re.sub(r":\d$", ""): one digit cut
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_references_pass():
    assert all(check(name, get(name).reference()).passed for name in CAUSES)


def test_the_variants_cover_six_devices_and_indices_of_one_and_two_digits():
    devices = [t.device for _, t in exercises._device_variants()]
    assert {d.type for d in devices} == {"cpu", "emps", "meta", "mps", "cuda", "xpu"}
    assert {d.index for d in devices} >= {1, 10}


def test_a_function_that_prints_is_not_taken_for_one_that_answers_the_index():
    verdict = check("00.device_type", exercises._printed())
    assert "returned None" in verdict.message and "index" not in verdict.message


def test_the_prediction_outcome_is_measured():
    assert exercises._mixed_devices() == "RuntimeError"


RIGHT_DEVICE_TYPES = (
    lambda t: str(t.device).split(":")[0],
    lambda t: str(t.device).partition(":")[0],
    lambda t: str(t.device).rstrip(":0123456789"),
    lambda t: torch.device(str(t.device)).type,
    lambda t: re.match(r"[a-z]+", str(t.device)).group(0),
)


@pytest.mark.parametrize("index", range(len(RIGHT_DEVICE_TYPES)))
def test_other_right_device_types_pass(index):
    assert check("00.device_type", RIGHT_DEVICE_TYPES[index]).passed


def test_other_tensors_on_emps_pass():
    tensors = (
        torch.nn.Parameter(torch.ones(2).to("emps")),
        torch.empty(0, device="emps"),
        torch.tensor(1.0, device="emps:0"),
        torch.arange(4).to(torch.device("emps")),
    )
    assert all(check("00.on_emps", t).passed for t in tensors)
