"""A local JupyterHub on 127.0.0.1 to try the course as a room of learners would (`make hub`), and
the measurement behind README's sizing table (`make test-hub`).

`serve` starts the hub for a person: open the URL it prints, log in with any name and the
printed password; it stops by itself after --minutes. `measure` logs N learners in through the
login form, starts their servers, has each run the learner copy of notebook 01 top to bottom at
the same time (through the proxy, over the Jupyter kernel protocol, as JupyterLab's Run All
does), and records each learner's peak memory: the sampled peak of the summed RSS of their
server and kernel processes. It writes build/hub/measure.json and prints the sizing table.

Everything is bounded in time, and every process started here is stopped on the way out (the
hub, the proxy, and each learner's server and kernel), also when a step fails.

    python hub/local_hub.py serve [--minutes 60]
    python hub/local_hub.py measure [--learners 3]
    python hub/local_hub.py links https://hub.example.org    # nbgitpuller links, one per lesson
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import psutil
import requests
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parents[1]
CONFIG = Path(__file__).resolve().parent / "jupyterhub_config.py"
OUT = ROOT / "build" / "hub"
NOTEBOOK = "01_the_plateau.ipynb"
START_TIMEOUT_S = 120
CELL_TIMEOUT_S = 300
RUN_TIMEOUT_S = 900
SAMPLE_EVERY_S = 0.25
GIB = 1024**3
MACHINES_GB = (16, 64)
# Left to the system, the hub and the proxy on a workshop machine, and kept free per learner.
RESERVED_GB = 2.0
HEADROOM = 1.25


def proxy_command() -> str:
    """configurable-http-proxy from npm (web/package.json), installed into build/node if needed."""
    try:
        from scripts.web_deps import node_modules  # imported from the repository root (tests)
    except ModuleNotFoundError:
        sys.path.insert(0, str(ROOT))
        from scripts.web_deps import node_modules
    return str(node_modules() / ".bin" / "configurable-http-proxy")


def free_port_block(size: int = 3) -> int:
    """A port p with p .. p+size-1 all free on 127.0.0.1 (proxy, hub API, proxy API)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + size < 65536 and all(_free(base + k) for k in range(size)):
            return base
    raise RuntimeError("no block of free ports on 127.0.0.1")


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def learner_notebook() -> nbformat.NotebookNode:
    """The learner copy of notebook 01 (learner/), or the reference with its outputs stripped."""
    path = ROOT / "learner" / NOTEBOOK
    nb = nbformat.read(path if path.exists() else ROOT / "notebooks" / NOTEBOOK, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def stop_tree(process: psutil.Process, grace_s: float = 10.0) -> None:
    """SIGTERM a process and all its descendants, then SIGKILL what is left after grace_s."""
    with contextlib.suppress(psutil.NoSuchProcess):
        family = [process, *process.children(recursive=True)]
        for member in family:
            with contextlib.suppress(psutil.NoSuchProcess):
                member.send_signal(signal.SIGTERM)
        _, alive = psutil.wait_procs(family, timeout=grace_s)
        for member in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                member.kill()
        psutil.wait_procs(alive, timeout=grace_s)


@dataclass
class Hub:
    """A running local hub: where it listens and how the test service talks to it."""

    url: str
    token: str
    password: str
    process: subprocess.Popen
    state: Path
    log: Path

    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        headers = {"Authorization": f"token {self.token}"}
        response = requests.request(
            method, f"{self.url}/hub/api{path}", headers=headers, timeout=30, **kwargs
        )
        response.raise_for_status()
        return response

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@contextlib.contextmanager
def running_hub(state: Path | None = None) -> Iterator[Hub]:
    """Start the hub with hub/jupyterhub_config.py; stop it and everything it started on exit."""
    with contextlib.ExitStack() as stack:
        if state is None:
            state = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="course-hub-")))
        port = free_port_block()
        token, password = secrets.token_hex(16), secrets.token_hex(8)
        env = {
            **os.environ,
            "COURSE_HUB_STATE": str(state),
            "COURSE_HUB_PORT": str(port),
            "COURSE_HUB_PROXY": proxy_command(),
            "COURSE_HUB_TOKEN": token,
            "COURSE_HUB_PASSWORD": password,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        log = state / "jupyterhub.log"
        hub_bin = Path(sys.executable).parent / "jupyterhub"
        with log.open("w") as sink:
            process = subprocess.Popen(
                [str(hub_bin), "-f", str(CONFIG)],
                cwd=state,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        hub = Hub(f"http://127.0.0.1:{port}", token, password, process, state, log)
        stack.enter_context(sigterm_as_exit())
        try:
            _wait_until_up(hub)
            yield hub
        finally:
            stop_tree(psutil.Process(process.pid), grace_s=20)


@contextlib.contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """Turn SIGTERM (a CI time limit, `timeout`) into SystemExit, so clean-up still runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(_signum, _frame):
        raise SystemExit(143)

    previous = signal.signal(signal.SIGTERM, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _wait_until_up(hub: Hub) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if hub.process.poll() is not None:
            raise RuntimeError(f"the hub exited ({hub.process.returncode}):\n{hub.log_tail()}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{hub.url}/hub/api", timeout=5).ok:
                return
        time.sleep(0.5)
    raise RuntimeError(f"the hub did not answer within {START_TIMEOUT_S} s:\n{hub.log_tail()}")


def log_in(hub: Hub, name: str) -> requests.Session:
    """Log a learner in through the login form, as a browser does; returns their session."""
    session = requests.Session()
    session.get(f"{hub.url}/hub/login", timeout=30).raise_for_status()
    form = {"username": name, "password": hub.password, "_xsrf": session.cookies.get("_xsrf")}
    answer = session.post(f"{hub.url}/hub/login", data=form, timeout=30, allow_redirects=False)
    if answer.status_code != 302 or "login" in answer.headers.get("location", ""):
        raise RuntimeError(f"login as {name} refused ({answer.status_code})")
    return session


def start_server(hub: Hub, name: str) -> None:
    """Start a learner's server and wait until the hub says it is ready."""
    hub.api("POST", f"/users/{name}/server")
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        server = hub.api("GET", f"/users/{name}").json()["servers"].get("", {})
        if server.get("ready"):
            return
        time.sleep(0.5)
    raise RuntimeError(f"{name}'s server did not start within {START_TIMEOUT_S} s")


def server_process(name: str) -> psutil.Process:
    """The learner's jupyterhub-singleuser process (found by its JUPYTERHUB_USER)."""
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if "jupyterhub-singleuser" not in cmdline:
            continue
        with contextlib.suppress(psutil.Error):
            if process.environ().get("JUPYTERHUB_USER") == name:
                return process
    raise RuntimeError(f"no server process for {name}")


def tree_rss(process: psutil.Process) -> int:
    """Resident memory of a process and all its descendants, in bytes."""
    total = 0
    with contextlib.suppress(psutil.NoSuchProcess):
        for member in [process, *process.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):
                total += member.memory_info().rss
    return total


class PeakSampler(threading.Thread):
    """Samples each learner's summed tree RSS until stopped, keeping the peak."""

    def __init__(self, processes: dict[str, psutil.Process]) -> None:
        super().__init__(daemon=True)
        self.processes = processes
        self.peaks = dict.fromkeys(processes, 0)
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(SAMPLE_EVERY_S):
            for name, process in self.processes.items():
                self.peaks[name] = max(self.peaks[name], tree_rss(process))

    def stop(self) -> None:
        self._done.set()
        self.join(timeout=5)


@dataclass
class LearnerRun:
    """What one learner's Run All did."""

    name: str
    cells: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    peak_bytes: int = 0


async def run_all(hub: Hub, name: str, nb: nbformat.NotebookNode) -> LearnerRun:
    """Start a kernel in the learner's server and execute every code cell in order."""
    result = LearnerRun(name)
    started = time.monotonic()
    base = f"{hub.url}/user/{name}/api"
    headers = {"Authorization": f"token {hub.token}"}
    kernel = await asyncio.to_thread(
        lambda: requests.post(
            f"{base}/kernels", json={"name": "python3"}, headers=headers, timeout=60
        )
    )
    kernel.raise_for_status()
    kernel_id = kernel.json()["id"]
    ws_url = base.replace("http://", "ws://") + f"/kernels/{kernel_id}/channels"
    socket_ = await websocket_connect(HTTPRequest(ws_url, headers=headers), max_message_size=2**28)
    try:
        session = uuid.uuid4().hex
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            error = await asyncio.wait_for(
                _execute(socket_, session, cell.source), timeout=CELL_TIMEOUT_S
            )
            result.cells += 1
            if error:
                result.errors.append(f"cell {index}: {error}")
    finally:
        socket_.close()
        await asyncio.to_thread(
            lambda: requests.delete(f"{base}/kernels/{kernel_id}", headers=headers, timeout=60)
        )
    result.seconds = time.monotonic() - started
    return result


async def _execute(socket_, session: str, code: str) -> str | None:
    """Send one execute_request; wait for its reply and for the kernel to go idle."""
    msg_id = uuid.uuid4().hex
    header = {
        "msg_id": msg_id,
        "msg_type": "execute_request",
        "session": session,
        "username": "course-test",
        "version": "5.3",
        "date": "",
    }
    content = {"code": code, "silent": False, "store_history": True, "allow_stdin": False}
    message = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
    await socket_.write_message(json.dumps({**message, "channel": "shell"}))
    error, replied, idle = None, False, False
    while not (replied and idle):
        raw = await socket_.read_message()
        if raw is None:
            return "the kernel's connection closed"
        if isinstance(raw, bytes):
            continue  # binary frames carry buffers (widgets): nothing to check here
        reply = json.loads(raw)
        if reply.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = reply["header"]["msg_type"]
        if kind == "error":
            error = f"{reply['content']['ename']}: {reply['content']['evalue']}"[:300]
        elif kind == "execute_reply":
            replied = True
        elif kind == "status" and reply["content"]["execution_state"] == "idle":
            idle = True
    return error


async def run_everyone(hub: Hub, names: list[str], nb: nbformat.NotebookNode) -> list[LearnerRun]:
    """Every learner's Run All at the same time, bounded by RUN_TIMEOUT_S in all."""
    runs = asyncio.gather(*(run_all(hub, name, nb) for name in names))
    return await asyncio.wait_for(runs, RUN_TIMEOUT_S)


def measure(learners: int = 3) -> dict:
    """Log in `learners`, run notebook 01 in each at once, and return what was measured."""
    names = [f"learner{k}" for k in range(1, learners + 1)]
    nb = learner_notebook()
    with running_hub() as hub:
        for name in names:
            log_in(hub, name)
            start_server(hub, name)
        idle = {name: tree_rss(server_process(name)) for name in names}
        sampler = PeakSampler({name: server_process(name) for name in names})
        sampler.start()
        try:
            runs = asyncio.run(run_everyone(hub, names, nb))
        finally:
            sampler.stop()
    for run in runs:
        run.peak_bytes = sampler.peaks[run.name]
    return {
        "notebook": NOTEBOOK,
        "learners": learners,
        "cpus": psutil.cpu_count(),
        "idle_server_bytes": max(idle.values()),
        "runs": [run.__dict__ for run in runs],
    }


def learners_per_machine(peak_bytes: int, machine_gb: int) -> int:
    """How many learners fit: (machine - reserve) / (peak x headroom), rounded down."""
    per_learner_gb = peak_bytes / GIB * HEADROOM
    return max(int((machine_gb - RESERVED_GB) // per_learner_gb), 0)


def sizing_table(result: dict) -> str:
    """README's sizing table (markdown) from a measurement."""
    peak = max(run["peak_bytes"] for run in result["runs"])
    lines = [
        "| machine memory | learners (notebook 01 at once) |",
        "|---|---|",
        *(f"| {gb} GB | {learners_per_machine(peak, gb)} |" for gb in MACHINES_GB),
    ]
    return "\n".join(lines)


def report(result: dict) -> str:
    """A few lines a person reads: per-learner peaks and times, then the table."""
    lines = [f"{result['learners']} learners ran {result['notebook']} at once:"]
    for run in result["runs"]:
        lines.append(
            f"  {run['name']}: peak {run['peak_bytes'] / GIB:.2f} GiB, {run['cells']} cells in "
            f"{run['seconds']:.0f} s, {len(run['errors'])} errors"
        )
    lines.append(
        f"sizing: per-learner peak x {HEADROOM} headroom, {RESERVED_GB:.0f} GB kept for the system"
    )
    return "\n".join([*lines, sizing_table(result)])


def nbgitpuller_link(
    hub_url: str, notebook: str = "00_start_here.ipynb", branch: str = "main"
) -> str:
    """A link that clones (first click) or updates (later clicks) the course in a learner's home
    on a hub with nbgitpuller installed, then opens the learner's own copy of `notebook`, in the
    clone's `workspace/`, in JupyterLab.

    Not the learner copy in `learner/`: nbgitpuller would merge upstream changes into a notebook
    the learner edited there. hub/workshop_config.py's start hook fills `workspace/` from
    `learner/` before each server starts (never over an edited notebook), so the link's target
    exists by the time nbgitpuller redirects to it."""
    from urllib.parse import quote

    from course.frontends import REPOSITORY, WORKSPACE_DIR

    folder = REPOSITORY.rstrip("/").rsplit("/", 1)[-1]
    query = (
        f"repo={quote(REPOSITORY, safe='')}&branch={quote(branch, safe='')}"
        f"&urlpath={quote(f'lab/tree/{folder}/{WORKSPACE_DIR}/{notebook}', safe='')}"
    )
    return f"{hub_url.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def serve(minutes: float) -> None:
    """Run the hub for a person to try, until Ctrl-C or `minutes` have passed."""
    with running_hub() as hub:
        print(f"JupyterHub on {hub.url}  (any user name, password {hub.password})")
        print(f"stops by itself in {minutes:g} minutes; Ctrl-C stops it now", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            deadline = time.monotonic() + minutes * 60
            while time.monotonic() < deadline and hub.process.poll() is None:
                time.sleep(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve").add_argument("--minutes", type=float, default=60)
    commands.add_parser("measure").add_argument("--learners", type=int, default=3)
    commands.add_parser("links").add_argument("hub_url", help="e.g. https://hub.example.org")
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.minutes)
        return 0
    if args.command == "links":
        from course.catalog import LESSONS

        for lesson in LESSONS:
            print(f"{lesson.filename[:2]}  {nbgitpuller_link(args.hub_url, lesson.filename)}")
        return 0
    result = measure(args.learners)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "measure.json").write_text(json.dumps(result, indent=2))
    print(report(result))
    return 1 if any(run["errors"] for run in result["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
