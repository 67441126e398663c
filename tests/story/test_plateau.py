"""The plateau criteria of issue 3, on the default profile, and the CLI that reports them."""

from __future__ import annotations

import json

import pytest

from course.__main__ import main
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


def test_bad_arguments_are_clear():
    with pytest.raises(CourseError, match="device='tpu'"):
        plateau.run(device="tpu")
    with pytest.raises(CourseError, match="init='sideways'"):
        plateau.run(init="sideways")
    with pytest.raises(CourseError, match="lr="):
        plateau.run(lr=-1.0, steps=2)


def test_cli_json_has_stable_keys(capsys, tmp_path):
    assert main(["plateau", "--steps", "30", "--json", "--plot", str(tmp_path / "p.png")]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert set(figures) == {"run", "reference", "loss_ratio", "plateau"}
    assert figures["run"]["encoder_frozen"] is True
    assert figures["run"]["encoder_max_exp_avg_sq"] == 0.0
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_text_report(capsys):
    assert main(["plateau", "--steps", "20", "--profile", "macos15"]) == 0
    assert "no plateau" in capsys.readouterr().out


def test_figures_render():
    one = plateau.run(steps=5, progress=None)
    assert len(plateau.loss_figure({"a": one}).axes) == 1
    assert len(plateau.change_figure(one).axes[0].lines) == 2
