"""Device probing: answers without importing any lesson, and follows what torch reports."""

from __future__ import annotations

import pytest
import torch

from course import devices


def test_cpu_machine_reports_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(devices, "mps_available", lambda: False)
    assert devices.local_device() == "cpu"


def test_accelerators_win_in_order(monkeypatch):
    monkeypatch.setattr(devices, "mps_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert devices.local_device() == "mps"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert devices.local_device() == "cuda"


def test_mps_probe_follows_torch(monkeypatch):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert devices.mps_available()
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert not devices.mps_available()


def test_pinned_threads_are_restored_after_an_error():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError), devices.pinned_threads(1):
        assert torch.get_num_threads() == 1
        raise RuntimeError("inside")
    assert torch.get_num_threads() == before
