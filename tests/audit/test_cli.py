"""`python -m course audit`: a table or JSON, and bad flags as one clear line."""

from __future__ import annotations

import json

import torch

from course.audit.cli import cli
from course.audit.engine import LAYOUTS


def test_cli_prints_a_table_and_json(capsys):
    args = ["--device", "emulated:2.4-macos14", "--layout", "transposed", "--dtype", "float32"]
    assert cli(args) == 0
    out = capsys.readouterr()
    assert "aten::normal_" in out.out and "flagged:" in out.out and "aten::addcmul_" not in out.out
    assert "[" in out.err  # progress goes to stderr
    assert cli(["--device", "cpu", "--json", "--op", "addcmul_", "--dtype", "float32"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["torch"] == torch.__version__ and data["device"] == "cpu"
    assert data["summary"]["flagged"] == [] and len(data["results"]) == len(LAYOUTS)
    assert {"op", "dtype", "layout", "verdict", "reproduction"} <= set(data["results"][0])
    assert cli(["--device", "quantum"]) == 2
    if not torch.cuda.is_available():
        capsys.readouterr()
        assert cli(["--device", "cuda"]) == 0
        assert (
            capsys.readouterr().out.strip()
            == "cuda: skipped, CUDA is not available on this machine"
        )


def test_a_bad_shape_flag_is_one_clear_line(capsys):
    assert cli(["--op", "relu_", "--shape", "3x4"]) == 2
    assert "--shape '3x4'" in capsys.readouterr().err
