"""The student release (`make release DIR=...`): everything a student needs, no answer in it.

Run All of every learner copy inside a release is tests/test_learner_copies.py's job (its
learner copies run there); here what the release holds and what it cannot print.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.test_learner_copies import make_release, release


def test_the_release_holds_the_learner_copies_and_the_package_only():
    top = release()
    assert (top / "course" / "exercises" / "__init__.py").is_file()
    assert sorted(p.name for p in (top / "learner").glob("*.ipynb"))
    assert not (top / "notebooks").exists() and not (top / "tests").exists()


def test_no_reference_solution_appears_anywhere_in_the_release():
    assert make_release.leaks(release()) == []


def test_a_leak_would_be_found(tmp_path):
    """The leak check is not blind: a reference notebook copied in is found."""
    top = tmp_path / "r"
    make_release.write_release(top)
    notebook = make_release.ROOT / "notebooks" / "03_inside_adam.ipynb"
    (top / "stray.ipynb").write_text(notebook.read_text())
    assert any(leak.startswith("03.adam_step in stray.ipynb") for leak in make_release.leaks(top))


def test_a_call_of_the_notebooks_helpers_is_skipped_and_a_real_region_still_found(tmp_path):
    """01.floor's region only calls what notebook 01 imports or defines: not a leak; 02.grad_check's
    computes the answer: found, in the same file."""
    top = tmp_path / "r"
    make_release.write_release(top)
    regions = make_release.solution_regions()
    helper_call, real = regions["01.floor"][0], regions["02.grad_check"][0]
    assert make_release.names_a_helper(helper_call, make_release.notebook_names("01.floor"))
    (top / "stray.py").write_text(f"{helper_call}\n\ndef f(grad):\n{real}\n")
    leaks = make_release.leaks(top)
    assert "02.grad_check in stray.py" in leaks
    assert not any(leak.startswith("01.floor") for leak in leaks)


def test_only_one_statement_of_helper_calls_is_skipped():
    helpers = {"best_possible_loss", "dataset"}
    assert make_release.names_a_helper("floor = best_possible_loss(dataset())", helpers)
    assert not make_release.names_a_helper("floor = best_possible_loss(data) * 2", set())
    assert not make_release.names_a_helper("floor = min(dataset())", helpers)  # min is no helper
    assert not make_release.names_a_helper("floor = dataset().loss()", helpers)
    assert not make_release.names_a_helper("a = dataset()\nb = dataset()", helpers)
    assert not make_release.names_a_helper("floor = 0.25", helpers)


def _in_release(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(release()), "COURSE_INSTRUCTOR": "1"}
    env.pop("COURSE_SOLUTIONS", None)
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=release(),  # not the checkout: its course/ would come first on sys.path
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_checks_work_and_no_solution_can_be_printed_there():
    result = _in_release(
        "import course, torch\n"
        "from course.exercises import check, solution, reveal_all\n"
        "print(course.__file__)\n"
        "print(check('04.address', lambda index, stride, offset: offset + sum(\n"
        "    i * s for i, s in zip(index, stride))).passed)\n"
        "print(solution('04.address'))\n"
        "try:\n"
        "    reveal_all()\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(str(release())) and lines[1] == "True"
    assert "holds no reference solutions" in result.stdout
    assert "offset + sum" not in result.stdout.split("\n", 2)[2]


def test_a_release_is_written_into_a_new_folder_only(tmp_path):
    (tmp_path / "x").write_text("mine")
    with pytest.raises(SystemExit, match="not empty"):
        make_release.write_release(tmp_path)
