"""The optional Triton demo skips cleanly without a GPU (its kernel: test_triton_naive.py)."""

from __future__ import annotations

import torch

from course.kernels.cpp.gpu import triton_demo, triton_device


def test_triton_demo_skips_cleanly_without_a_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert triton_device() is None
    assert triton_demo().startswith("skipping the optional Triton section: no CUDA GPU")
