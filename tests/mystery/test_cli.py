"""`python -m course mystery`: one case, or a room's deal with its key."""

from __future__ import annotations

import sys

import pytest

from course.mystery import cli
from course.mystery.case import REDRAWS, measured
from course.mystery.cli import deal, key_lines, pairs
from course.mystery.conditions import Trigger, ordinal
from course.mystery.generate import generate
from tests.mystery.runs import untrained_case


def test_with_a_seed_it_prints_that_cases_brief_and_runs_it(capsys):
    assert cli(["--seed", "14"]) == 0
    out = capsys.readouterr().out
    assert "(seed 14)" in out and measured(14).spec.design.description in " ".join(out.split())
    assert "norm before -> after" in out and "Your case has seed" not in out


def test_without_a_seed_it_says_which_seed_it_chose(capsys, monkeypatch):
    monkeypatch.setattr("secrets.randbelow", lambda n: 14)
    assert cli([]) == 0
    assert "Your case has seed 14 (open it again with --seed 14)" in capsys.readouterr().out


def test_a_deal_trains_nothing_and_keeps_the_key_apart(capsys, monkeypatch, tmp_path):
    """Dealing needs specs, not runs (Note [Dealing trains nothing]): no scenario is trained,
    however many cases, so its time does not grow with the machine's load."""

    def no_training(*args, **kwargs):
        raise AssertionError("dealing trained a scenario")

    monkeypatch.setattr("course.mystery.scenarios.run", no_training)
    monkeypatch.setattr("course.mystery.case.run", no_training)
    key = tmp_path / "key.txt"
    assert cli(["--deal", "25", "--key", str(key)]) == 0
    out = capsys.readouterr().out
    seeds = [int(line) for line in out.splitlines() if line.startswith("  ")]
    assert len(seeds) == 25
    text = key.read_text()
    assert all(f"seed {seed}:" in text for seed in seeds)
    assert not [line for line in out.splitlines() if line.startswith("seed ")]  # key apart
    assert (
        text.count("  repro:\n    def repro()") == 25 and text.count("  fix:\n    def patch(") == 25
    )
    assert cli(["--deal", "3"]) == 0
    assert "--- instructor's key (do not show) ---\nseed " in capsys.readouterr().out


def test_dealt_seeds_are_far_apart_and_share_no_op_and_condition():
    seeds = deal(25)
    assert len(set(seeds)) == 25
    assert min(abs(a - b) for a in seeds for b in seeds if a != b) > 1  # not consecutive
    assert len({(generate(s).bug.op, generate(s).bug.trigger.kind) for s in seeds}) == 25


def test_past_the_pool_pairs_repeat_only_after_every_pair_is_used():
    seeds = deal(len(pairs()) + 2)
    first = [(generate(s).bug.op, generate(s).bug.trigger.kind) for s in seeds[: len(pairs())]]
    assert set(first) == pairs()


def test_a_key_folder_that_does_not_exist_is_refused_before_any_work(capsys, monkeypatch):
    monkeypatch.setattr(sys.modules["course.mystery.cli"], "deal", lambda count: 1 / 0)
    assert cli(["--deal", "3", "--key", "/nonexistent/dir/key.txt"]) == 2
    assert "the folder /nonexistent/dir does not exist" in capsys.readouterr().err


def test_condition_texts_name_the_op_and_ordinals_are_english():
    assert "x.mul_(-0.5)" in Trigger("negative-scalar").describe("mul_")
    assert "clamp" not in Trigger("negative-scalar").describe("lerp_")
    assert Trigger("foreach", 2).describe() == "foreach calls, from the 3rd tensor of the list on"
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22)] == [
        "1st",
        "2nd",
        "3rd",
        "4th",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
    ]


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


def test_the_key_names_each_later_draw_as_the_learners_brief_does():
    """A seed whose first draw shows no symptom opens a later one (case.measured); the brief
    says which draw, and the key lists each later draw's culprit under that same name."""
    seed = 2142
    lines = key_lines(seed)
    later = [line for line in lines if line.startswith("  if the brief says")]
    assert len(later) == REDRAWS - 1
    for n, line in enumerate(later, start=1):
        spec = generate(seed, n)
        assert f"'seed {seed}, draw {n + 1}': {spec.bug.op} on " in line
    second = untrained_case(generate(seed, 1))
    assert f"(seed {seed}, draw 2)" in str(second.describe())
    assert f"(seed {seed})" in str(untrained_case(generate(seed)).describe())
