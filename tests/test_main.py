"""`python -m course`: every command routes to its module's cli, and a typo names the commands."""

from __future__ import annotations

import importlib

import pytest

from course.__main__ import COMMANDS, main, usage


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_a_cli(name):
    module = importlib.import_module(COMMANDS[name][0])
    assert callable(module.cli)


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS) and out.strip() == usage()


def test_unknown_command_names_the_known_ones(capsys):
    assert main(["plateu"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'plateu'" in err and "mystery" in err
