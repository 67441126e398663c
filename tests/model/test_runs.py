"""The runs every lesson makes: one call trains the story's SAE on a profile and device."""

from __future__ import annotations

import pytest
import torch

from course.errors import CourseError
from course.model import runs


def test_fixed_profile_trains_even_with_transposed_init():
    summary = runs.run("2.4-macos14", steps=20, progress=None).summary()
    assert summary["encoder_frozen"] is False


def test_cpu_run_trains():
    assert runs.run(device="cpu", steps=20, progress=None).history.frozen["encoder.weight"] is False


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"device": "tpu"}, "device='tpu'"),
        ({"init": "sideways"}, "init='sideways'"),
        ({"lr": -1.0}, "lr=-1.0"),
        ({"seed": "x"}, "seed='x'"),
        ({"k": 0}, "k=0"),
        ({"steps": True}, "steps=True"),
        ({"batch_size": 10**7}, "batch_size=10000000"),
        ({"n_features": 0}, "n_features=0"),
        ({"epochs": 3}, "unknown training options \\['epochs'\\]"),
        ({"profile": "2.3"}, "unknown emulated profile '2.3'"),
    ],
)
def test_bad_arguments_are_refused_before_any_training(kwargs, match):
    with pytest.raises(CourseError, match=match):
        runs.run(progress=None, **kwargs)


def test_mps_without_an_mps_device_is_refused(monkeypatch):
    monkeypatch.setattr(runs, "mps_available", lambda: False)
    with pytest.raises(CourseError, match="device='mps' needs a real Apple-MPS device"):
        runs.run(device="mps")


def test_a_run_leaves_the_global_rng_alone():
    torch.manual_seed(42)
    expected = torch.rand(4)
    torch.manual_seed(42)
    runs.run(steps=2, progress=None, n_features=64, k=8)
    assert torch.equal(torch.rand(4), expected)


def test_fresh_model_and_trainer_are_the_runs_building_blocks():
    model = runs.fresh_model(d_model=16, n_features=32, k=4)
    assert str(model.encoder.weight.device) == "emps:0"
    history = runs.trainer(steps=2)(model)
    assert len(history.loss) == 2 and history.frozen["encoder.weight"] is True
    cpu = runs.fresh_model(device="cpu", d_model=16, n_features=32, k=4)
    assert runs.trainer("fixed-macos14", steps=2)(cpu).frozen["encoder.weight"] is False


def test_each_caller_gets_its_own_copy_of_the_course_data():
    """An in-place op on one caller's data (a learner's `data.x -= ...`) reaches nobody else."""
    mine, theirs = runs.dataset(), runs.dataset()
    mine.x.zero_()
    assert theirs.x.abs().sum() > 0 and runs.dataset().x.abs().sum() > 0
