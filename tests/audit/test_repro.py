"""Every reproduction line runs as pasted, and shows the finding (or its absence)."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
import torch

from course.audit.args import build_call, discover
from course.audit.core import LAYOUTS, audit
from course.audit.repro import reproduction


def run_line(line: str) -> str:
    """Execute a pasted line (the learner's global RNG restored afterwards); return its output."""
    out = io.StringIO()
    with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(out):
        exec(line, {})
    return out.getvalue()


def counts(text: str) -> tuple[int, int]:
    found = re.search(r"(\d+) of (\d+)", text)
    return int(found[1]), int(found[2])


def op(name: str):
    return next(o for o in discover() if o.name == f"aten::{name}")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        ("addcmul_", torch.float32),
        ("mul_.Scalar", torch.int64),
        ("logical_and_", torch.bool),
        ("masked_fill_.Scalar", torch.float16),
    ],
)
def test_a_correct_kernel_shows_no_difference_in_any_layout(name, dtype, layout):
    call = build_call(op(name), dtype)
    if layout == "expanded" and not call.tensor_inputs:
        pytest.skip("no tensor input to expand")
    line = reproduction(op(name), call, layout, "cpu")
    assert "\n" not in line and line.startswith("import torch;")
    assert all(len(statement) < 100 for statement in line.split("; "))  # fits a cell, one a line
    assert counts(run_line(line))[0] == 0


def test_a_planted_lost_write_shows_in_its_line():
    def lazy_sin_(self):
        if self.is_contiguous():
            self.copy_(torch.sin(self))
        return self

    with torch.library._scoped_library("aten", "IMPL") as library:
        library.impl("sin_", lazy_sin_, "CPU")
        (result,) = audit("cpu", ops="sin_", layouts="transposed", dtypes="float32")
        differing, total = counts(run_line(result.reproduction))
    assert result.verdict == "silent-no-write" and differing == total == 1536


def test_random_ops_report_unwritten_poison():
    call = build_call(op("normal_"), torch.float32)
    line = reproduction(op("normal_"), call, "permuted", "cpu")
    assert counts(run_line(line)) == (0, 1536)


def test_emulated_findings_reproduce_with_the_cli():
    call = build_call(op("addcmul_"), torch.float32)
    line = reproduction(op("addcmul_"), call, "transposed", "emps:0", "emulated:2.2.1-macos14")
    assert line == (
        "python -m course audit --device emulated:2.2.1-macos14 --op addcmul_ --dtype float32 "
        "--layout transposed"
    )
