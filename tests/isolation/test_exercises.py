"""Notebook 02's checkers: wrong experiments fail on the bench that exposes them, with a reason."""

from __future__ import annotations

import pytest

from course.exercises import check, get
from course.isolation import exercises


def messages(name: str) -> list[str]:
    return [check(name, wrong()).message for wrong in get(name).wrong_answers]


def test_did_not_move_needs_exact_equality():
    allclose, threshold, stride = messages("02.did_not_move")
    assert "next float32 value" in allclose and "next float32 value" in threshold


def test_grad_check_names_the_wrong_statistic():
    no_abs, small, count, nonzero = messages("02.grad_check")
    assert "max |grad|" in no_abs
    assert all("zero fraction" in m for m in (small, count, nonzero))


def test_sgd_step_explains_the_lost_write_of_a_rebinding():
    rebinding, no_grad, no_lr, sign = messages("02.sgd_step")
    assert "bound to the local name `p`" in rebinding and "lost write" in rebinding
    assert "leaf Variable" in no_grad
    assert "differs from torch.optim.SGD" in no_lr and "differs" in sign


def test_encoder_moves_catches_constants_closeness_aliases_and_a_missing_backward():
    constant, close, aliased, no_backward, decoder = messages("02.encoder_moves")
    assert "torch.optim.SGD" in constant
    assert "lr = 1e-8" in close and "exact comparison" in close
    assert "SGD" in aliased and "SGD" in no_backward and "story's bench with Adam" in decoder


def test_encoder_moves_wants_a_bool():
    verdict = check("02.encoder_moves", lambda bench, update: "yes")
    assert not verdict.passed and "return True or False" in verdict.message


def test_expected_moves_differ_across_benches():
    found = {exercises._expected_moves(i) for i in range(len(exercises.MOVES_VARIANTS))}
    assert found == {True, False}


def test_adam_state_explains_a_name_key():
    decoder, signed, by_name, constant = messages("02.adam_state")
    assert "story's bench" in decoder and "story's bench" in signed
    assert "keyed by the parameter tensor" in by_name
    assert "max |exp_avg|" in constant


def test_two_variables_points_at_the_refusal():
    assert check("02.two_variables", {"dtype", "device"}).passed
    assert "device refused" in check("02.two_variables", {"dtype"}).message
    assert "not among the choices" in check("02.two_variables", {"weather"}).message


def test_differences_wants_called_methods():
    attrs_only, uncalled, values = messages("02.differences")
    assert "encoder and decoder" in attrs_only and "exact clone" in uncalled
    assert "call the methods" in values


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("_zero_pattern", "whole rows"),
        ("_update_size", "enormous: lr * m / eps"),
        ("_contiguous_moves", "yes"),
    ],
)
def test_prediction_outcomes_are_measured(name, expected):
    assert getattr(exercises, name)() == expected
