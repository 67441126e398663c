"""Notebook 02's tables: computed from the function handed in, and never a crash for "Run All"."""

from __future__ import annotations

import pytest
import torch

from course.exercises import SCAFFOLD
from course.isolation import experiments, readouts

SMALL = {"d_model": 64, "n_features": 256, "k": 8}


def scaffold(*args):
    raise NotImplementedError(SCAFFOLD)


def test_gradients_come_from_the_function_given():
    bench = experiments.bench(device="cpu", **SMALL)
    bench.backward()
    rows = readouts.gradients(lambda g: (g.abs().max().item(), 0.25), bench)
    largest = bench.parameter(experiments.ENCODER).grad.abs().max().item()
    assert rows[0] == {
        "weight": experiments.ENCODER,
        "max |grad|": f"{largest:.4g}",
        "zero fraction": "0.25",
    }
    assert [r["weight"] for r in rows] == [experiments.ENCODER, experiments.DECODER]


def test_a_function_not_written_yet_or_failing_fills_its_cells():
    bench = experiments.bench(device="cpu", **SMALL)
    assert readouts.gradients(scaffold, bench)[0]["max |grad|"] == "not written yet"
    assert readouts.adam_state(lambda b: 1 / 0)[0]["max |exp_avg|"] == "raised ZeroDivisionError"
    assert readouts.differences(lambda a, b: ..., bench)[0]["differs in"] is ...


def test_moves_runs_each_update_on_a_fresh_bench():
    seen = []

    def encoder_moves(bench, update):
        seen.append(bench)
        return update

    rows = readouts.moves(encoder_moves, {"a": True, "b": False})
    assert rows == [
        {"update": "a", "encoder moved": True},
        {"update": "b", "encoder moved": False},
    ]
    assert len({id(b) for b in seen}) == 2


def test_herrings_ask_for_every_betas_and_step_count():
    rows = readouts.herrings(lambda bench, betas, steps: (betas, steps))
    asked = [row["encoder never moved"] for row in rows]
    assert asked == [(b, s) for b in readouts.HERRING_BETAS for s in readouts.HERRING_STEPS]
    assert (0.5, 0.0) in readouts.HERRING_BETAS  # beta2 = 0, which the text names


@pytest.mark.parametrize(
    "found", [{"stride", "is_contiguous"}, frozenset({"is_contiguous", "stride"})]
)
def test_differences_are_shown_sorted(found):
    bench = experiments.bench(device="cpu", **SMALL)
    rows = readouts.differences(lambda a, b: found, bench)
    assert rows[1] == {
        "encoder.weight vs": "a fresh tensor of its shape",
        "differs in": "is_contiguous, stride",
    }


def test_differences_compare_the_encoder_with_the_decoder_and_a_fresh_tensor():
    bench = experiments.bench(device="cpu", **SMALL)
    pairs = []
    readouts.differences(lambda a, b: pairs.append((a, b)) or set(), bench)
    (enc, dec), (_, fresh) = pairs
    assert enc is bench.parameter(experiments.ENCODER)
    assert dec is bench.parameter(experiments.DECODER)
    assert fresh.shape == enc.shape and fresh.is_contiguous() and fresh.device == enc.device
    assert isinstance(fresh, torch.Tensor)
