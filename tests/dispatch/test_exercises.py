"""Notebook 05's checkers and predictions: hidden variants, and feedback that explains."""

from __future__ import annotations

import torch

from course.dispatch import exercises as ex
from course.exercises import _prediction, check, get


def test_kernel_for_variants_come_from_the_live_registry():
    variants = ex.kernel_for_variants()
    assert ("addcdiv_", "MPS") in variants and len(variants) >= 6
    kinds = {bool(ex.lookup(op).structured_delegate) for op, _ in variants}
    assert kinds == {True, False}  # delegates and ops with their own table


def test_kernel_for_feedback_says_what_to_follow():
    delegate = check("05.kernel_for", lambda op, backend: ex.lookup(op).structured_delegate)
    assert "the overload it delegates to" in delegate.message
    own_table = check("05.kernel_for", get("05.kernel_for").wrong_answers[0]())
    assert "structured_delegate has one" in own_table.message
    assert "give a function" in check("05.kernel_for", "addcmul_out_mps").message


def test_keys_that_run_variants_and_feedback():
    labels = [label for label, *_ in ex.KEY_VARIANTS]
    assert any("dispatch mode" in label for label in labels)
    assert any("inference_mode" in label for label in labels)
    reversed_keys = check("05.keys_that_run", get("05.keys_that_run").wrong_answers[3]())
    assert "wrong order" in reversed_keys.message
    no_mode = check("05.keys_that_run", get("05.keys_that_run").wrong_answers[1]())
    assert "dispatch mode" in no_mode.message
    assert not check("05.keys_that_run", lambda op, tensor: "CPU").passed


def test_custom_op_feedback_names_the_side_that_changed_the_layout():
    exercise = get("05.custom_op")
    contiguous_real = check("05.custom_op", exercise.wrong_answers[3]())
    assert "your CPU kernel returns stride" in contiguous_real.message
    assert "empty_like" not in contiguous_real.message
    row_major_fake = check("05.custom_op", exercise.wrong_answers[2]())
    assert "allocate it like avg_sq" in row_major_fake.message
    alias = check("05.custom_op", exercise.wrong_answers[4]())
    assert "returned its input" in alias.message and "scroll up" not in alias.message


def test_custom_op_accepts_any_consistent_pair():
    def real(a, g, b):
        return (b * a + (1 - b) * g * g).contiguous()

    def fake(a, g, b):
        return torch.empty(a.shape, device=a.device)

    assert check("05.custom_op", (real, fake)).passed
    on_cpu = check("05.custom_op", (get("05.custom_op").reference()[0], lambda a, g, b: a.cpu()))
    assert "meta" in on_cpu.message


def test_predictions_come_from_the_live_torch():
    assert _prediction("05.binding").outcome() == "nowhere: it is generated C++"
    assert _prediction("05.mps_kernel").outcome() == "addcmul.out's kernel, shared with addcmul"
    assert _prediction("05.call_order").outcome() == "AutogradCPU, ADInplaceOrView, then CPU"
    assert _prediction("05.override").outcome() == "a huge jump"


def test_override_experiment_restores_the_table():
    from course.dispatch.tables import key_summary

    before = key_summary("addcmul_", "CPU")
    result = ex.override_experiment()
    assert result["max exp_avg_sq"] == 0 and result["calls"] == 1
    assert result["CPU kernels during"][0].startswith("registration.py")
    assert key_summary("addcmul_", "CPU") == before
