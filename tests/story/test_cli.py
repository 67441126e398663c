"""`python -m course plateau`: the default comparison, its JSON, and paths refused up front."""

from __future__ import annotations

import json

import pytest

from course.__main__ import main
from course.story import cli

KEYS = {"run", "reference", "loss_ratio", "plateau"}


def test_default_comparison_is_an_unmistakable_plateau(capsys):
    assert main(["plateau", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert set(figures) == KEYS
    assert figures["plateau"] is True and figures["loss_ratio"] >= cli.PLATEAU_RATIO
    assert figures["run"]["encoder_frozen"] is True
    assert figures["run"]["encoder_max_exp_avg_sq"] == 0.0
    assert figures["run"]["steps"] == cli.QUICK["steps"]
    assert figures["reference"]["encoder_frozen"] is False


def test_json_keys_and_plots(capsys, tmp_path):
    args = ["plateau", "--steps", "10", "--features", "64", "--json"]
    assert main([*args, "--plot", str(tmp_path / "p.png")]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert set(figures) == KEYS and set(figures["run"]) == set(figures["reference"])
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "p_change.png").read_bytes()[:4] == b"\x89PNG"


def test_text_report_on_a_fixed_profile(capsys):
    assert main(["plateau", "--steps", "10", "--features", "64", "--profile", "macos15"]) == 0
    out = capsys.readouterr().out
    assert "no plateau" in out and "stride" in out


@pytest.mark.parametrize(
    ("plot", "message"),
    [
        ("/nonexistent/x.png", "the folder '/nonexistent' does not exist"),
        ("plot.txt", "give a file ending in .png"),
    ],
)
def test_bad_plot_paths_are_refused_before_training(capsys, monkeypatch, plot, message):
    trained = []
    monkeypatch.setattr(cli, "run", lambda *a, **k: trained.append(1))
    assert main(["plateau", "--plot", plot]) == 2
    assert message in capsys.readouterr().err
    assert trained == []


def test_bad_sizes_are_reported_not_raised(capsys):
    assert main(["plateau", "--batch-size", "10000000"]) == 2
    assert "batch_size=10000000" in capsys.readouterr().err
