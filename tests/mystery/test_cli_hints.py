"""`python -m course mystery` and the hints."""

from __future__ import annotations

import pytest

from course.mystery import OPS, cli
from course.mystery.bugs import CONDITIONS
from course.mystery.case import choose
from course.mystery.hints import STEPS, hint_text


def test_with_a_seed_it_prints_that_cases_brief_and_runs_it(capsys):
    assert cli(["--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert choose(2).brief in out and "(seed 2)" in out
    assert "step  40/40" in out and "norm before -> after" in out
    assert "Your case has seed" not in out


def test_without_a_seed_it_says_which_seed_it_chose(capsys, monkeypatch):
    monkeypatch.setattr("secrets.randbelow", lambda n: 2)
    assert cli([]) == 0
    assert "Your case has seed 2 (open it again with --seed 2)" in capsys.readouterr().out


def test_a_bad_seed_is_one_clear_line(capsys):
    assert cli(["--seed", "-3"]) == 2
    assert capsys.readouterr().err.startswith("error: seed=-3")


def test_hints_point_to_methods_never_to_an_answer():
    for step in STEPS:
        words = set(step.replace("(", " ").replace(")", " ").replace(",", " ").split())
        assert not words & set(OPS) and not words & set(CONDITIONS), step
    assert hint_text(1).startswith(f"Hint 1/{len(STEPS)}")
    with pytest.raises(ValueError):
        hint_text(0)
