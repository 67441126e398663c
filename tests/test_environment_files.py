"""environment.yml (conda/Binder) and pyproject.toml must list the same dependencies."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def pyproject_names() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["dev"]
    return {_name(r) for r in requirements}


def environment_names(text: str | None = None) -> set[str]:
    env = yaml.safe_load(text or (ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    return {_name(r) for r in pip if not r.startswith(("-", "--"))}


def test_same_dependency_names():
    missing_in_env = pyproject_names() - environment_names()
    missing_in_pyproject = environment_names() - pyproject_names()
    assert not missing_in_env, f"in pyproject.toml but not environment.yml: {missing_in_env}"
    assert not missing_in_pyproject, f"only in environment.yml: {missing_in_pyproject}"


def test_environment_installs_the_course_itself():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert "-e ." in pip


def test_torch_pin_matches_makefile():
    makefile = (ROOT / "Makefile").read_text()
    pin = re.search(r"TORCH_SPEC \?= (torch==[\d.]+)", makefile).group(1)
    assert pin in (ROOT / "environment.yml").read_text()


def test_drift_is_detected():
    """The comparison itself must notice a dependency missing from one side."""
    text = (ROOT / "environment.yml").read_text().replace("      - nbval>=0.11\n", "")
    assert "nbval" in pyproject_names() - environment_names(text)
