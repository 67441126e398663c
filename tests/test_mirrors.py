"""Every course module has its mirrored test file: course/<pkg>/<m>.py -> tests/<pkg>/test_<m>.py.

A module's tests live where a reader looks for them; `__main__` is mirrored by `test_main.py`.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def mirror(module: Path) -> Path:
    """The test file that mirrors `module` (a path relative to the repository root)."""
    package = module.parent.relative_to("course")
    return Path("tests") / package / f"test_{module.stem.strip('_')}.py"


def test_the_mirror_of_a_module_sits_at_the_same_depth_under_tests():
    assert mirror(Path("course/mystery/models.py")) == Path("tests/mystery/test_models.py")
    assert mirror(Path("course/mps_check.py")) == Path("tests/test_mps_check.py")
    assert mirror(Path("course/__main__.py")) == Path("tests/test_main.py")


def test_every_course_module_has_its_mirrored_test_file():
    modules = sorted(
        path.relative_to(ROOT)
        for path in (ROOT / "course").rglob("*.py")
        if path.name != "__init__.py"
    )
    assert len(modules) > 50, modules  # the walk found the package
    missing = [f"{m} -> {mirror(m)}" for m in modules if not (ROOT / mirror(m)).is_file()]
    assert not missing, "modules without their mirrored test file:\n" + "\n".join(missing)
