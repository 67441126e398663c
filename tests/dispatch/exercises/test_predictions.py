"""Notebook 05's predictions come from the installed torch, and the override is undone."""

from __future__ import annotations

from course.dispatch.exercises import predictions
from course.dispatch.registry import lookup
from course.dispatch.tables import key_summary
from course.exercises.registry import prediction


def test_predictions_come_from_the_live_torch():
    assert prediction("05.binding").outcome() == "nowhere: it is generated C++"
    assert prediction("05.mps_kernel").outcome() == "addcmul.out's kernel, shared with addcmul"
    assert prediction("05.call_order").outcome() == "AutogradCPU, ADInplaceOrView, then CPU"
    assert prediction("05.override").outcome() == "a huge jump"
    assert not lookup("addcmul_").dispatch  # on 2.13 to 2.15: the delegate's kernel


def test_override_experiment_restores_the_table():
    before = key_summary("addcmul_", "CPU")
    result = predictions.override_experiment()
    assert result["max exp_avg_sq"] == 0 and result["calls"] == 1
    assert result["CPU kernels during"][0].startswith("registration.py")
    assert key_summary("addcmul_", "CPU") == before
