"""`python -m course mystery`: one case, or a room's deal with its key."""

from __future__ import annotations

import pytest

from course.mystery import cli
from course.mystery.case import measured
from course.mystery.cli import deal


def test_with_a_seed_it_prints_that_cases_brief_and_runs_it(capsys):
    assert cli(["--seed", "14"]) == 0
    out = capsys.readouterr().out
    assert "(seed 14)" in out and measured(14).spec.design.description in " ".join(out.split())
    assert "norm before -> after" in out and "Your case has seed" not in out


def test_without_a_seed_it_says_which_seed_it_chose(capsys, monkeypatch):
    monkeypatch.setattr("secrets.randbelow", lambda n: 14)
    assert cli([]) == 0
    assert "Your case has seed 14 (open it again with --seed 14)" in capsys.readouterr().out


def test_a_deal_hands_out_distinct_cases_and_keeps_the_key_apart(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr("secrets.randbelow", lambda n: 14)
    seeds = deal(3)
    assert len({measured(seed).spec.key() for seed in seeds}) == 3
    key = tmp_path / "key.txt"
    assert cli(["--deal", "3", "--key", str(key)]) == 0
    out = capsys.readouterr().out
    assert all(f"  {seed}" in out for seed in seeds) and "seed 14:" not in out
    lines = key.read_text().splitlines()
    assert len(lines) == 3 and lines[0].startswith("seed 14: ")
    assert measured(14).spec.bug.op in lines[0]
    assert cli(["--deal", "3"]) == 0
    assert "--- instructor's key (do not show) ---\nseed 14:" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--seed", "-3"], "error: seed=-3"),
        (["--deal", "0"], "error: --deal=0"),
        (["--key", "k"], "error: --key goes with --deal"),
    ],
)
def test_bad_arguments_are_one_clear_line(capsys, argv, says):
    assert cli(argv) == 2
    assert capsys.readouterr().err.startswith(says)
