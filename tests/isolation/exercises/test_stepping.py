"""02.sgd_step: a lost write never passes (02.encoder_moves is test_moves.py's)."""

from __future__ import annotations

import pytest
import torch

from course.exercises import check
from course.isolation import experiments
from tests.corpus import (
    all_corpora,
    corpus_tests,
)
from tests.isolation.exercises import corpus_stepping

CORPORA = tuple(c for c in corpus_stepping.CORPORA if c.name != "02.encoder_moves")

LOST = ("p = p - lr * p.grad", "params[i] = ...", "params[:] = [...]", "p.data = ...")


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


@pytest.mark.parametrize("flaw", [*LOST, "returns the new tensors"])
def test_every_write_that_misses_the_parameters_is_called_a_lost_write(flaw):
    make, _ = all_corpora()["02.sgd_step"].wrong[flaw]
    assert "a lost write" in check("02.sgd_step", make()).message.lower()


def test_a_rebinding_of_list_entries_is_a_lost_write_even_through_the_bench():
    """The issue's case: the list is rebound, the model's parameters never change."""
    make, _ = all_corpora()["02.sgd_step"].wrong["params[i] = ..."]
    bench = experiments.bench()
    bench.backward()
    before = bench.snapshot()["encoder.weight"]
    bench.step(lambda params: make()(params, 1e-3))
    assert torch.equal(before, bench.snapshot()["encoder.weight"])
    verdict = check("02.sgd_step", make())
    assert not verdict.passed and "lost write" in verdict.message.lower()
