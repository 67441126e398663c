"""Notebook 07's predictions run their experiment, and the scramble's choices are real ones."""

from __future__ import annotations

import ast

import pytest
import torch

from course.exercises import registry
from course.kernels import cpp
from course.kernels.cpp import harness

SCRAMBLE = registry.prediction("07.predict_scramble")


def test_cache_lines_runs_the_experiment():
    assert registry.prediction("07.cache_lines").outcome() == "16: one line per element"


def test_the_scramble_is_what_the_naive_kernel_leaves():
    assert SCRAMBLE.outcome() == "[[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]"


def test_each_scramble_choice_is_a_layout_of_the_numbers_out_can_hold():
    """Every choice is out.tolist() of a (2, 3) output; one is torch's answer, one the kernel's."""
    out, t1, t2 = harness.scramble_inputs(2, 3)
    grids = [torch.tensor(ast.literal_eval(choice)) for choice in SCRAMBLE.choices]
    assert all(g.shape == (2, 3) for g in grids)
    assert str(torch.addcmul(out, t1, t2).tolist()) in SCRAMBLE.choices
    assert SCRAMBLE.outcome() in SCRAMBLE.choices and len(set(SCRAMBLE.choices)) == 4


@pytest.mark.compile
def test_the_compiled_naive_kernel_scrambles_as_revealed():
    cpp.load()
    assert str(cpp.apply("naive", *harness.scramble_inputs(2, 3)).tolist()) == SCRAMBLE.outcome()
