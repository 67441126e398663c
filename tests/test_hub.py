"""The workshop hub: its configs, the sizing arithmetic, and (with -m hub) a real local hub.

The measurement logs 3 learners in to a JupyterHub on 127.0.0.1, runs the learner copy of
notebook 01 for all of them at once and records each one's peak memory: it takes minutes, so
it runs only when asked for by its marker (`make test-hub`, which CI runs), never in `make test`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote

import nbformat
import psutil
import pytest
from traitlets.config import Config

from course.catalog import LESSONS

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("local_hub", ROOT / "hub/local_hub.py")
local_hub = importlib.util.module_from_spec(_spec)
sys.modules["local_hub"] = local_hub  # its dataclasses look their module up
_spec.loader.exec_module(local_hub)
GIB = local_hub.GIB


def load_config(path: Path, env: dict[str, str], monkeypatch) -> Config:
    """A JupyterHub config file evaluated as JupyterHub does, into a traitlets Config."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    config = Config()
    exec(compile(path.read_text(), str(path), "exec"), {"get_config": lambda: config})
    return config


def test_the_test_hub_listens_on_loopback_only(monkeypatch, tmp_path):
    env = {
        "COURSE_HUB_STATE": str(tmp_path),
        "COURSE_HUB_PORT": "18000",
        "COURSE_HUB_PROXY": "/x/configurable-http-proxy",
        "COURSE_HUB_TOKEN": "t",
        "COURSE_HUB_PASSWORD": "p",
    }
    c = load_config(local_hub.CONFIG, env, monkeypatch)
    assert c.JupyterHub.ip == c.JupyterHub.hub_ip == c.Spawner.ip == "127.0.0.1"
    assert c.ConfigurableHTTPProxy.api_url == "http://127.0.0.1:18002"
    assert c.JupyterHub.authenticator_class == "dummy"
    assert c.DummyAuthenticator.password == "p"  # never an open door, even on loopback


def test_the_workshop_recipe_uses_a_real_authenticator_and_limits(monkeypatch):
    env = {"COURSE_ROOM_PASSWORD": "room", "COURSE_ADMIN_PASSWORD": "admin"}
    c = load_config(ROOT / "hub/workshop_config.py", env, monkeypatch)
    assert c.JupyterHub.authenticator_class not in ("dummy", "null")
    assert c.SharedPasswordAuthenticator.user_password == "room"
    assert c.SystemdSpawner.mem_limit and c.SystemdSpawner.cpu_limit
    env = c.Spawner.environment
    assert env["COURSE_CACHE_DIR"]  # notebook 06's sources, filled once for every learner
    assert int(env["OMP_NUM_THREADS"]) <= c.SystemdSpawner.cpu_limit  # threads fit the share


@pytest.mark.parametrize(
    "peak_gib, machine_gb, expected", [(0.6, 16, 18), (0.6, 64, 82), (3, 16, 3)]
)
def test_learners_per_machine(peak_gib, machine_gb, expected):
    assert local_hub.learners_per_machine(int(peak_gib * GIB), machine_gb) == expected


def test_sizing_table_uses_the_largest_peak():
    runs = [{"peak_bytes": int(0.5 * GIB)}, {"peak_bytes": int(0.6 * GIB)}]
    table = local_hub.sizing_table({"runs": runs})
    assert "| 16 GB | 18 |" in table and "| 64 GB | 82 |" in table


def test_the_learner_notebook_has_no_outputs():
    nb = local_hub.learner_notebook()
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)


def test_stop_tree_stops_children_too():
    script = "import subprocess, time; subprocess.Popen(['sleep', '60']); time.sleep(60)"
    parent = subprocess.Popen([sys.executable, "-c", script])
    process = psutil.Process(parent.pid)
    for _ in range(100):
        if process.children():
            break
        time.sleep(0.1)
    family = [process, *process.children(recursive=True)]
    assert len(family) == 2
    local_hub.stop_tree(process, grace_s=5)
    parent.wait(timeout=5)
    assert not any(member.is_running() and member.status() != "zombie" for member in family)


def link_fields(notebook: str) -> dict[str, str]:
    link = local_hub.nbgitpuller_link("https://hub.example.org/", notebook)
    base, query = link.split("?")
    assert base == "https://hub.example.org/hub/user-redirect/git-pull"
    return {key: unquote(value) for key, value in (part.split("=") for part in query.split("&"))}


def test_nbgitpuller_links_open_the_learners_workspace_copy():
    from course.frontends import REPOSITORY

    fields = link_fields("01_the_plateau.ipynb")
    assert fields["repo"] == REPOSITORY and fields["branch"] == "main"
    assert fields["urlpath"] == "lab/tree/pytorch-internals-course/workspace/01_the_plateau.ipynb"


LESSONS_IN_TEST = ("00_start_here.ipynb", "01_the_plateau.ipynb")


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def hub_machine(tmp_path):
    """The course's repository (two lessons and the workspace script), a learner's empty home,
    and a stand-in for jupyterhub-singleuser that prints its arguments."""
    upstream = tmp_path / "upstream"
    (upstream / "learner").mkdir(parents=True)
    (upstream / "scripts").mkdir()
    for name in LESSONS_IN_TEST:
        shutil.copyfile(ROOT / "learner" / name, upstream / "learner" / name)
    shutil.copyfile(ROOT / "scripts/lab_workspace.py", upstream / "scripts/lab_workspace.py")
    (upstream / ".gitignore").write_text("workspace/\n")
    git("init", "--quiet", "--initial-branch=main", cwd=upstream)
    git("add", ".", cwd=upstream)
    git("commit", "--quiet", "-m", "the course", cwd=upstream)
    bin_dir, home = tmp_path / "bin", tmp_path / "home"
    bin_dir.mkdir()
    home.mkdir()
    server = bin_dir / "jupyterhub-singleuser"
    server.write_text('#!/bin/sh\necho "server started in $PWD with $*"\n')
    server.chmod(0o755)
    (bin_dir / "python3").symlink_to(sys.executable)
    return {"upstream": upstream, "home": home, "bin": bin_dir}


def start_server(machine: dict, monkeypatch) -> subprocess.CompletedProcess:
    """A learner's server start as the workshop hub runs it: its Spawner.cmd plus the hub's
    arguments, in the learner's home, with the course's address pointing at the local copy."""
    from course.frontends import REPOSITORY

    env = {"COURSE_ROOM_PASSWORD": "room", "COURSE_ADMIN_PASSWORD": "admin"}
    c = load_config(ROOT / "hub/workshop_config.py", env, monkeypatch)
    environment = {
        **os.environ,
        "PATH": f"{machine['bin']}{os.pathsep}{os.environ['PATH']}",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.{machine['upstream'].as_uri()}.insteadOf",
        "GIT_CONFIG_VALUE_0": REPOSITORY,
    }
    return subprocess.run(
        [*c.Spawner.cmd, "--port=8888"],
        cwd=machine["home"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_the_start_hook_clones_once_and_the_links_open_the_workspace_copy(hub_machine, monkeypatch):
    started = start_server(hub_machine, monkeypatch)
    home = hub_machine["home"]
    assert started.stdout.strip().endswith(f"server started in {home} with --port=8888")
    for name in LESSONS_IN_TEST:
        target = home / link_fields(name)["urlpath"].removeprefix("lab/tree/")
        assert target.read_bytes() == (hub_machine["upstream"] / "learner" / name).read_bytes()
    clone = home / "pytorch-internals-course"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True)
    assert status.stdout == b""  # workspace/ is ignored: nbgitpuller's merge never touches it


def test_a_restart_never_overwrites_a_learners_edit(hub_machine, monkeypatch):
    start_server(hub_machine, monkeypatch)
    home, upstream = hub_machine["home"], hub_machine["upstream"]
    clone, mine = home / "pytorch-internals-course", "01_the_plateau.ipynb"
    edited = clone / "workspace" / mine
    nb = nbformat.read(edited, as_version=4)
    nb.cells[-1].source += "\n# my own note"
    nbformat.write(nb, edited)
    mine_now = edited.read_bytes()
    lesson = nbformat.read(upstream / "learner" / mine, as_version=4)
    lesson.cells[0].source += "\n\nA corrected sentence."
    nbformat.write(lesson, upstream / "learner" / mine)
    git("commit", "--quiet", "-am", "lesson 01 corrected", cwd=upstream)
    git("pull", "--quiet", "--no-rebase", str(upstream), "main", cwd=clone)  # a later click
    started = start_server(hub_machine, monkeypatch)
    assert edited.read_bytes() == mine_now
    beside = clone / "workspace" / "01_the_plateau.new.ipynb"
    assert "A corrected sentence." in beside.read_text()
    assert "01_the_plateau.new.ipynb" in started.stdout


def test_a_server_starts_even_when_the_course_cannot_be_cloned(hub_machine, monkeypatch):
    shutil.rmtree(hub_machine["upstream"])  # as offline: nothing to clone from
    started = start_server(hub_machine, monkeypatch)
    assert "server started" in started.stdout
    assert "course-start: could not clone" in started.stderr


def test_links_prints_one_link_per_lesson(capsys):
    assert local_hub.main(["links", "https://hub.example.org"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(LESSONS) and all("git-pull?repo=" in line for line in lines)


def test_a_free_port_block_is_free():
    base = local_hub.free_port_block()
    assert all(local_hub._free(base + k) for k in range(3))


@pytest.fixture
def hub_selected(request) -> None:
    expression = request.config.getoption("markexpr") or ""
    if "hub" not in expression or "not hub" in expression:
        pytest.skip("starts a JupyterHub for minutes: run it with -m hub (make test-hub)")


@pytest.mark.hub
def test_three_learners_run_notebook_01_at_once(hub_selected):
    result = local_hub.measure(learners=3)
    local_hub.OUT.mkdir(parents=True, exist_ok=True)
    (local_hub.OUT / "measure.json").write_text(json.dumps(result, indent=2))
    print("\n" + local_hub.report(result))
    assert len(result["runs"]) == 3
    for run in result["runs"]:
        assert run["errors"] == [], f"{run['name']}: {run['errors']}"
        assert run["cells"] >= 5
        assert 50 * 2**20 < run["peak_bytes"] < 8 * GIB, run
