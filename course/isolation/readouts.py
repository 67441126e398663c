"""Notebook 02's result tables, computed from the learner's own checked functions.

Why the notebook computes these rows instead of asking the learner for them: the text after each
table reads it ("your table says frozen in every case"), so a table must come from the function
the checker has just judged, never be a value left blank. A function that fails (or is still the
learner copy's scaffold) fills its cell with what stopped it instead of crashing "Run All".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

from course.exercises.watch import learner_result
from course.isolation import experiments
from course.isolation.experiments import DECODER, ENCODER, Bench, Update

HERRING_BETAS = ((0.9, 0.999), (0.9, 0.9), (0.5, 0.0))  # the story's, a shorter memory, beta2 = 0
HERRING_STEPS = (1, 5)


def _number(value: object) -> object:
    """A float shown to 4 significant digits; anything else (a wrong type, a message) as it is."""
    return (
        f"{value:.4g}" if isinstance(value, float | int) and not isinstance(value, bool) else value
    )


def gradients(
    grad_check: Callable[[torch.Tensor], object], bench: Bench
) -> list[dict[str, object]]:
    """Your `grad_check` on both weights' gradients (after one `bench.backward()`)."""
    rows = []
    for name in (ENCODER, DECODER):
        got = learner_result(lambda name=name: grad_check(bench.parameter(name).grad))
        pair = isinstance(got, tuple | list) and len(got) == 2
        largest, zeros = got if pair else (got, "")
        rows.append(
            {"weight": name, "max |grad|": _number(largest), "zero fraction": _number(zeros)}
        )
    return rows


def moves(
    encoder_moves: Callable[[Bench, Update], object], updates: Mapping[str, Update]
) -> list[dict[str, object]]:
    """Your `encoder_moves` for each update, each on a fresh story bench (same model and batch)."""
    return [
        {
            "update": label,
            "encoder moved": learner_result(lambda u=u: encoder_moves(experiments.bench(), u)),
        }
        for label, u in updates.items()
    ]


def adam_state(encoder_adam_state: Callable[[Bench], object]) -> list[dict[str, object]]:
    """Your `encoder_adam_state` on a fresh story bench, as one row."""
    got = learner_result(lambda: encoder_adam_state(experiments.bench()))
    pair = isinstance(got, tuple | list) and len(got) == 2
    m, v = got if pair else (got, "")
    return [{"weight": ENCODER, "max |exp_avg|": _number(m), "max exp_avg_sq": _number(v)}]


def herrings(frozen_after: Callable[[Bench, tuple, int], object]) -> list[dict[str, object]]:
    """Your `frozen_after` for each of the story's betas and step counts, each on a fresh bench."""
    return [
        {
            "betas": betas,
            "steps": steps,
            "encoder never moved": learner_result(
                lambda b=betas, s=steps: frozen_after(experiments.bench(), b, s)
            ),
        }
        for betas in HERRING_BETAS
        for steps in HERRING_STEPS
    ]


def differences(
    compare: Callable[[torch.Tensor, torch.Tensor], object], bench: Bench
) -> list[dict[str, object]]:
    """Your `differences` between the encoder weight and the decoder weight, and between the
    encoder weight and a freshly allocated tensor of its own shape on its device."""
    encoder = bench.parameter(ENCODER)
    others = {
        DECODER: bench.parameter(DECODER),
        "a fresh tensor of its shape": torch.zeros(encoder.shape, device=encoder.device),
    }

    def shown(other: torch.Tensor) -> object:
        found = compare(encoder, other)
        return ", ".join(sorted(found)) if isinstance(found, set | frozenset) else found

    return [
        {"encoder.weight vs": label, "differs in": learner_result(lambda o=other: shown(o))}
        for label, other in others.items()
    ]
