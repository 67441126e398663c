"""Colab, Binder and the set-up cell every learner copy starts with.

The install is tested for real: a fresh virtual environment without the course (torch and the
other dependencies made visible from this disk, so nothing big is downloaded) runs the set-up
cell with the repository given as a local path, as Colab runs it with the GitHub URL.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from course import frontends
from course.catalog import LESSONS

ROOT = Path(__file__).resolve().parents[1]


def test_one_place_holds_the_repository_url():
    holders = [
        path.relative_to(ROOT).as_posix()
        for folder in ("course", "scripts")
        for path in (ROOT / folder).rglob("*.py")
        if frontends.REPOSITORY in path.read_text()
    ]
    assert holders == ["course/frontends.py"]


def test_the_release_ref_follows_the_package_version():
    pyproject = (ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    assert f"v{version}" == frontends.REF


def test_links_open_learner_copies():
    url = frontends.colab_url("01_the_plateau.ipynb")
    assert url == (
        "https://colab.research.google.com/github/OWNER/pytorch-internals-course/blob/"
        f"{frontends.REF}/learner/01_the_plateau.ipynb"
    )
    assert frontends.binder_url().endswith("?urlpath=lab/tree/learner/00_start_here.ipynb")


def test_readme_holds_the_colab_table_and_the_binder_link():
    readme = (ROOT / "README.md").read_text()
    assert frontends.colab_table() in readme, "paste course.frontends.colab_table() into README"
    assert frontends.binder_url() in readme
    assert len(frontends.colab_table().splitlines()) == len(LESSONS) + 2


def test_every_learner_copy_starts_with_the_set_up_cell():
    import json

    for path in sorted((ROOT / "learner").glob("*.ipynb")):
        first = json.loads(path.read_text())["cells"][0]
        assert "".join(first["source"]) == frontends.setup_cell_source(), path.name


def _run_cell(python: str, source: str, cwd: Path, env: dict | None = None) -> str:
    result = subprocess.run(
        [python, "-c", source], cwd=cwd, capture_output=True, text=True, timeout=900, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip()


def test_where_the_course_is_installed_the_cell_is_a_one_line_no_op(tmp_path):
    out = _run_cell(sys.executable, frontends.setup_cell_source(), tmp_path)
    assert out.startswith("Set-up: nothing to do") and "\n" not in out


def test_in_a_notebook_the_set_up_cell_shows_its_line_once(tmp_path):
    """As a kernel runs it: IPython shows the value of a cell's last line under what it prints."""
    (tmp_path / "cell.py").write_text(frontends.setup_cell_source())
    shell = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().run_cell(open('cell.py').read(), store_history=True)"
    )
    out = _run_cell(sys.executable, shell, tmp_path)
    assert out.startswith("Set-up: nothing to do") and "\n" not in out, out


def test_on_colab_the_widget_manager_is_enabled(tmp_path):
    """A stand-in `google.colab.output` records the call the real one would get."""
    fake = tmp_path / "google" / "colab"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "output.py").write_text(
        "def enable_custom_widget_manager():\n    open('enabled', 'w').write('yes')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = _run_cell(sys.executable, frontends.setup_cell_source(), tmp_path, env)
    assert out.endswith("Colab's widget manager is on.") and (tmp_path / "enabled").exists()


def _repository_copy(destination: Path) -> Path:
    """What pip needs of a clone to build the course: pyproject, README and the package."""
    destination.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, destination / name)
    shutil.copytree(
        ROOT / "course", destination / "course", ignore=shutil.ignore_patterns("__pycache__")
    )
    return destination


def test_a_fresh_environment_without_the_course_installs_it_and_keeps_torch(tmp_path):
    venv = tmp_path / "venv"
    # No pip of its own (ensurepip is slow): this disk's pip comes in with the dependencies.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies (torch first) come from this disk, not from a multi-GB download.
    Path(site, "course-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    here = tmp_path / "notebook-folder"
    here.mkdir()
    cell = frontends.setup_cell_source(spec=str(_repository_copy(tmp_path / "repo")))
    probe = "import importlib.util; print(importlib.util.find_spec('course') is None)"
    assert _run_cell(python, probe, here) == "True", "the fresh environment must lack the course"

    start = time.perf_counter()
    out = _run_cell(python, cell, here)
    seconds = time.perf_counter() - start
    print(f"set-up cell in a fresh environment: {seconds:.1f} s")  # reported with -s

    assert out.splitlines()[-1].startswith("Set-up: installed the course")
    assert not list(Path(site).glob("torch*")), "pip reinstalled torch although one was present"
    assert list(Path(site).glob("pytorch_internals_course*"))
    again = _run_cell(python, cell, here)
    assert again.startswith("Set-up: nothing to do") and "\n" not in again


def test_binder_opens_the_learner_copy_of_notebook_00():
    """postBuild imports JupyterLab's default workspace: the notebook tab and the file browser."""
    import json

    post_build = ROOT / "postBuild"
    assert os.access(post_build, os.X_OK)
    subprocess.run(["bash", "-n", str(post_build)], check=True)
    text = post_build.read_text()
    layout = json.loads(text.split("<<'JSON'\n", 1)[1].split("\nJSON\n", 1)[0])
    opened = layout["data"]["layout-restorer:data"]["main"]["current"].removeprefix("notebook:")
    assert opened == f"{frontends.LEARNER_DIR}/{frontends.START}"
    assert (ROOT / opened).is_file()
    assert "jupyter lab workspaces import" in text
