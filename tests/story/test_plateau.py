"""The plateau criteria of issue 3, on the default profile, and the CLI that reports them."""

from __future__ import annotations

import pytest
import torch

from course.errors import CourseError
from course.story import plateau


@pytest.fixture(scope="module")
def runs():
    return plateau.compare()


def test_story_run_is_a_plateau(runs):
    story, fixed = runs["transposed"].summary(), runs["contiguous"].summary()
    assert story["encoder_frozen"] is True and story["encoder_max_change"] == 0.0
    assert story["encoder_max_exp_avg_sq"] == 0.0 and story["encoder_max_exp_avg"] > 0
    assert story["decoder_frozen"] is False and story["decoder_max_change"] > 0
    assert story["final_loss"] >= 1.5 * fixed["final_loss"]
    assert story["encoder_stride"] == [1, 1536]


def test_contiguous_init_trains(runs):
    fixed = runs["contiguous"].summary()
    assert fixed["encoder_frozen"] is False and fixed["encoder_max_exp_avg_sq"] > 0


def test_fixed_profile_trains_even_with_transposed_init():
    summary = plateau.run("2.4-macos14", steps=20, progress=None).summary()
    assert summary["encoder_frozen"] is False


def test_cpu_run_trains():
    assert (
        plateau.run(device="cpu", steps=20, progress=None).history.frozen["encoder.weight"] is False
    )


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
        plateau.run(progress=None, **kwargs)


def test_mps_without_an_mps_device_is_refused(monkeypatch):
    monkeypatch.setattr(plateau, "mps_available", lambda: False)
    with pytest.raises(CourseError, match="device='mps' needs a real Apple-MPS device"):
        plateau.run(device="mps")


def test_a_run_leaves_the_global_rng_alone():
    torch.manual_seed(42)
    expected = torch.rand(4)
    torch.manual_seed(42)
    plateau.run(steps=2, progress=None, n_features=64, k=8)
    assert torch.equal(torch.rand(4), expected)


def test_version_label_names_versions_only():
    for name in ("2.2.1-macos14", "2.4-macos14", "fixed-macos14", "macos15"):
        label = plateau.version_label(name)
        assert "macOS" in label
        assert not any(word in label for word in ("addcmul", "addcdiv", "drop", "fixed", "random"))
    assert plateau.version_label() == "PyTorch 2.2.1 on macOS 14 (emulated)"


def test_fresh_model_and_trainer_are_the_runs_building_blocks():
    model = plateau.fresh_model(d_model=16, n_features=32, k=4)
    assert str(model.encoder.weight.device) == "emps:0"
    history = plateau.trainer(steps=2)(model)
    assert len(history.loss) == 2 and history.frozen["encoder.weight"] is True
    cpu = plateau.fresh_model(device="cpu", d_model=16, n_features=32, k=4)
    assert plateau.trainer("fixed-macos14", steps=2)(cpu).frozen["encoder.weight"] is False


def test_figures_render_with_whole_step_ticks():
    one = plateau.run(steps=5, progress=None, n_features=64, k=8)
    ax = plateau.loss_figure({"a": one}, log=False).axes[0]
    assert ax.get_yscale() == "linear"
    fig = plateau.change_figure(one)
    assert len(fig.axes[0].lines) == 2 and "init" not in fig.axes[0].get_title()
    ticks = fig.axes[0].get_xticks()
    assert all(float(t).is_integer() for t in ticks)
