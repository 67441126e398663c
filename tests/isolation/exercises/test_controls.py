"""The control runs and the metadata comparison: one variable changed, and Adam really ran."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from course import exercises, journal
from course.exercises import check
from course.isolation import experiments
from course.isolation.exercises import controls
from course.isolation.exercises.stepping import reference_encoder_moves
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "02.float64_run": (
        "your bench is torch.float32",  # dtype forgotten
        "live on emps",  # the story's bench
        "changed its layout too",  # + contiguous init
        "seed 1",  # another seed
        "other sizes",  # a smaller model
        "no step has run",  # built, never run
        "stepped SGD",  # another optimizer
        "(0.01, (0.9, 0.999))",  # another learning rate
        "give the bench",  # the printed bool instead of the bench
        "no backward ran",  # Adam stepped without a backward
        "cleared before the step",  # zero_grad between backward and step
        "k = 16",  # another k
        "was torch.float32: the dtype and the device changed only after",  # made float64 after
        "weight_decay = 0.01",  # Adam with weight decay
    ),
    "02.float32_run": (
        "your bench is torch.float64",  # the float64 run again
        "live on emps",  # the story's bench
        "another profile is still the emulated device",  # a later profile, not the CPU
        "changed its layout too",  # + contiguous init
        "seed 2",  # another seed
        "batch size 256",  # other batches
        "no step has run",  # built, never run
        "stepped SGD",  # another optimizer
        "no backward ran",  # Adam stepped without a backward
        "cleared before the step",  # zero_grad between backward and step
        "k = 16",  # another k
        "the step ran before the backward",  # step, then backward
        "eps = 0.001",  # Adam with another eps
        "maximize = True",  # Adam climbing the loss
        "was on emps: the device changed only after the run",  # the story's run, then the CPU
    ),
    "02.contiguous_run": (
        "still stored transposed",  # the story's bench
        "live on cpu",  # + the CPU
        "also changed the profile",  # + a later profile
        "seed 1",  # another seed
        "other sizes",  # a smaller model
        "no step has run",  # built, never run
        "stepped SGD",  # another optimizer
        "no backward ran",  # Adam stepped without a backward
        "the step ran before the backward",  # step, then backward
        "k = 16",  # another k
        "batch size 64",  # other batches
        "decoder.weight is not contiguous",  # the decoder transposed too
        "amsgrad = True",  # AMSGrad
        "was not contiguous (stored transposed)",  # the story's run, then made contiguous
    ),
    "02.differences": (
        "is_contiguous, stride too",  # device, dtype and shape only
        "call a.stride() and a.is_contiguous()",  # a.stride, not a.stride()
        "only metadata tells them apart",  # compares values
        "is_contiguous too",  # no is_contiguous
        "shape too",  # stride and is_contiguous only
        "ask is_contiguous() on its own",  # a stride difference taken for contiguity
        "is_contiguous too",  # stride only
        "call a.is_contiguous()",  # only is_contiguous left uncalled
        "call a.stride()",  # only stride left uncalled
        "both take 4 bytes",  # dtype compared by element size
        "differ in shape too",  # shape compared by numel
        "offset into a storage changes neither",  # the storage offset taken for the stride
        "differ in shape too",  # shape compared sorted (a transpose reads as equal)
        "differ in shape too",  # the encoder's printed set, for every pair
        "differ in device too",  # devices compared after .cpu()
        "the last stride 1 does not make a tensor contiguous",  # stride[-1] == 1
        "differ in shape too",  # shape compared by len (the first size only)
        "compare the whole shape",  # shape[-1] only
        "is_contiguous too",  # contiguity as decreasing strides
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_a_control_made_by_hand_passes():
    """Only the state of the bench counts, not how it was built."""
    cpu64 = experiments.bench(device="cpu")
    cpu64.model.double()
    reference_encoder_moves()(cpu64, experiments.adam())
    assert check("02.float64_run", cpu64).passed
    contiguous = experiments.bench()
    weight = contiguous.parameter("encoder.weight")
    with torch.no_grad(), contiguous:
        weight.data = weight.data.contiguous()
    reference_encoder_moves()(contiguous, experiments.adam())
    verdict = check("02.contiguous_run", contiguous)
    assert verdict.passed and "encoder moved" in verdict.message


def test_a_run_stepped_outside_the_bench_is_told_so():
    cpu32 = experiments.bench(device="cpu")
    cpu32.backward()
    experiments.adam()(list(cpu32.model.parameters())).step()
    assert "The bench must be active" in check("02.float32_run", cpu32).message


def test_the_contiguous_prediction_is_measured():
    assert controls._contiguous_moves() == "yes"


@pytest.fixture
def new_learner(tmp_path, monkeypatch):
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(exercises, "_PREDICTED", {})


def test_what_the_float64_run_changes_is_asked_before_it_runs_and_measured(new_learner):
    """A pick from three is a prediction (committed once), not a check a retry would pass."""
    assert "02.two_variables" not in exercises.all_exercises()
    assert controls._float64_run_changes() == "the dtype and the device"
    assert not exercises.predict("02.two_variables", {"dtype", "device"}).passed  # off the list
    assert exercises.committed("02.two_variables") is None
    exercises.predict("02.two_variables", "only the dtype")
    exercises._PREDICTED.clear()  # a new kernel: the journal keeps the commitment
    assert "already committed to 'only the dtype'" in exercises.predict(
        "02.two_variables", "the dtype and the device"
    )
    assert "the dtype AND the device" in exercises.reveal("02.two_variables")


def test_on_a_device_that_took_float64_only_the_dtype_would_change(monkeypatch):
    monkeypatch.setattr(controls, "emps", SimpleNamespace(DEVICE="cpu"))
    assert controls._float64_run_changes() == "only the dtype"
