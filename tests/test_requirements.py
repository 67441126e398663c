"""The torch floor is defined once: the install pin in pyproject.toml and the doctor agree."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from course import doctor
from course.requirements import TORCH_FLOOR, TORCH_FLOOR_TEXT

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_pyproject_pins_the_same_floor():
    pins = re.findall(r'"torch>=([0-9.]+)', PYPROJECT.read_text())
    assert pins == [TORCH_FLOOR_TEXT], (
        f"pyproject.toml pins torch>={pins}, the course {TORCH_FLOOR}"
    )


def test_the_doctor_reports_a_torch_below_the_floor(monkeypatch):
    monkeypatch.setattr(torch, "__version__", "2.9.0")
    check = next(c for c in doctor.checks() if c.name == "torch")
    assert not check.ok and check.detail.endswith(f"the course needs >= {TORCH_FLOOR_TEXT}")
