"""The naive kernel in Triton: scrambles a transposed output where Triton runs, says what to
install where it is missing."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

from course.errors import CourseError


def test_without_triton_the_import_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)  # makes `import triton` fail
    monkeypatch.delitem(sys.modules, "course.kernels.cpp.triton_naive", raising=False)
    with pytest.raises(CourseError, match="pip install triton"):
        importlib.import_module("course.kernels.cpp.triton_naive")


def test_triton_naive_kernel_scrambles_in_the_interpreter():
    """Runs only where Triton is installed (never needed): its interpreter works on CPU tensors."""
    pytest.importorskip("triton")
    script = "from course.kernels.cpp.gpu import triton_demo; print(triton_demo())"
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "scrambled exactly as naive_model predicts: True" in done.stdout
