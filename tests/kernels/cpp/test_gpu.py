"""The optional Triton demo: a clean skip without a GPU, the scramble where Triton runs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from course.kernels.cpp.gpu import triton_demo, triton_device


def test_triton_demo_skips_cleanly_without_a_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert triton_device() is None
    assert triton_demo().startswith("skipping the optional Triton section: no CUDA GPU")


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
