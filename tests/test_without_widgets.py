"""Issue 33: the command line and the checkers run where ipywidgets is missing.

The doctor exists for exactly the broken machine, so no command of `python -m course` may die
of a missing widget stack; nor may a checker, nor the shared layer, which also imports no
lesson. Each test runs a fresh Python (what one process has imported says nothing about another:
`tests.forked`, whose children start with torch already imported and nothing of `course`) whose
import system refuses ipywidgets, as where it was never installed.
"""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

import pytest

from course.__main__ import COMMANDS
from tests import forked

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "course"

# Put first on the meta path: every import of ipywidgets fails as if it were not installed.
BLOCKER = """
class _NoWidgets:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "ipywidgets":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoWidgets())
"""
WIDGET_MODULES = {"course.ui"}  # the one shared module that is the widget stack's own
SUBPACKAGES = sorted(p.name for p in COURSE.iterdir() if (p / "__init__.py").exists())
SHARED = sorted(f"course.{p.stem}" for p in COURSE.glob("*.py") if p.stem != "__init__")


def _python(code: str, tmp_path: Path, *, blocked: bool = True) -> subprocess.CompletedProcess:
    """Run `code` in a fresh Python (ipywidgets refused when `blocked`), progress kept apart."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COURSE_PROGRESS_DIR": str(tmp_path)}
    return forked.python("import sys\n" + (BLOCKER if blocked else "") + code, env, timeout=600)


def _course(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    """`python -m course ARGV...` with ipywidgets refused."""
    code = (
        "import runpy\n"
        f"sys.argv = ['course', *{argv!r}]\n"
        "runpy.run_module('course', run_name='__main__', alter_sys=True)\n"
    )
    return _python(code, tmp_path)


def test_the_blocker_refuses_ipywidgets(tmp_path):
    """Without this, every test below could pass on a machine that imports nothing it blocks."""
    done = _python("import ipywidgets", tmp_path)
    assert done.returncode != 0 and "No module named 'ipywidgets'" in done.stderr


def test_a_fresh_python_has_loaded_no_course_module_and_no_widget_stack(tmp_path):
    """The tests below read what an import loaded from the fresh Python's `sys.modules`: that
    proves something only if it starts with no `course` module and no ipywidgets loaded, neither
    inherited from pytest (which has imported `course`) nor from what the fork helper preloads."""
    code = (
        "print(sorted(n for n in sys.modules if n.partition('.')[0] in ('course', 'ipywidgets')))\n"
    )
    done = _python(code, tmp_path, blocked=False)
    assert done.returncode == 0 and done.stdout.split() == ["[]"], done.stderr


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_commands_help_runs_without_widgets(name, tmp_path):
    done = _course([name, "--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout


def test_the_doctor_reports_the_missing_widgets_instead_of_dying_of_them(tmp_path):
    """`python -m course doctor` exits 0 where every notebook is ready: the widget stack decides
    no notebook's verdict, and its line names what is wrong."""
    done = _course(["doctor"], tmp_path)
    assert "[!!] widgets" in done.stdout and "cannot import ipywidgets" in done.stdout
    verdicts = done.stdout.split("\nNotebooks\n", 1)[1].splitlines()
    ready = all(line.split(maxsplit=1)[1].startswith("ready") for line in verdicts)
    assert len(verdicts) >= 10 and done.returncode == (0 if ready else 1), done.stderr


def test_progress_runs_without_widgets(tmp_path):
    """The whole table: every lesson's checks are imported, so none may need the widget stack."""
    done = _course(["progress"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "progress file:" in done.stdout


def test_progress_of_the_checks_seen_runs_without_widgets(tmp_path):
    done = _course(["progress", "--seen"], tmp_path)
    assert done.returncode == 0 and "progress file:" in done.stdout, done.stderr


@pytest.mark.parametrize("module", SHARED)
def test_a_shared_module_imports_no_lesson_and_no_widget_stack(module, tmp_path):
    """Only `course.exercises` (the checkers' own package) may load with a shared module; only
    `course.ui` may need ipywidgets."""
    code = (
        f"import {module}\n"
        "print(sorted({n.split('.')[1] for n in sys.modules if n.count('.') and "
        "n.startswith('course.')}))\n"
    )
    done = _python(code, tmp_path, blocked=module not in WIDGET_MODULES)
    assert done.returncode == 0, done.stderr
    loaded = set(ast.literal_eval(done.stdout.strip().splitlines()[-1])) & set(SUBPACKAGES)
    assert loaded <= {"exercises"}, f"{module} imports {sorted(loaded - {'exercises'})}"


def _lesson_04_imports() -> list[str]:
    """The course modules lesson 04's checks import, other than their own."""
    own = "course.layout.exercises"
    found = set()
    for path in (COURSE / "layout" / "exercises").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course"):
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("course")}
    return sorted(name for name in found if not name.startswith(own))


def test_what_lesson_04s_checks_import_needs_no_widget_stack(tmp_path):
    modules = _lesson_04_imports()
    assert "course.exercises" in modules and "course.layout.oracle" in modules
    done = _python("".join(f"import {name}\n" for name in modules), tmp_path)
    assert done.returncode == 0, done.stderr


def test_checking_an_address_imports_no_widget_stack(tmp_path):
    """The literal case of the issue: a learner's first check in notebook 04."""
    code = (
        "from course.exercises import check\n"
        "def address(index, stride, offset):\n"
        "    return offset + sum(i * s for i, s in zip(index, stride))\n"
        "verdict = check('04.address', address)\n"
        "print(verdict.passed, 'ipywidgets' in sys.modules)\n"
    )
    done = _python(code, tmp_path, blocked=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["True", "False"]
