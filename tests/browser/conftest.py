"""One JupyterLab server and one headless Chromium per pytest process, shared by its browser tests.

Why a real server and browser: nbval proves the kernels run, not that a learner sees working
widgets. Both processes are started once per session (JupyterLab takes seconds to start) and are
stopped in `finally` blocks, kernels included, even when a test fails or is interrupted. The
server serves a temporary copy of notebooks/, learner/ and assets/ (side by side, as in the
repository, so markdown's ../assets images resolve), so Run All never rewrites the repository's
files, and uses a temporary config and settings dir, so a developer's own JupyterLab set-up (and its
news pop-up) cannot change what the tests see. Under pytest-xdist each worker has its own of both
(its own port, token, runtime and config folders): `make test-browser` runs the whole-notebook Run
All tests (marker `run_all`) two at a time, then the other tests one at a time.

What a test measures for the end-of-run report is saved as a file in build/browser-records/<run>/,
so the report and the checks across notebooks see every test of the run, whichever worker or pytest
call ran it (see `BrowserReport`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil
import pytest

from tests.accessibility import Finding

ROOT = Path(__file__).resolve().parents[2]
# COURSE_BROWSER_NOTEBOOKS points the suite at another folder of notebooks (used to try it out).
NOTEBOOK_SRC = Path(os.environ.get("COURSE_BROWSER_NOTEBOOKS", ROOT / "notebooks"))
LEARNER_SRC = Path(os.environ.get("COURSE_BROWSER_LEARNER", ROOT / "learner"))
ASSETS_SRC = ROOT / "assets"
SCREENSHOTS = ROOT / "build" / "screenshots"
RECORDS = ROOT / "build" / "browser-records"  # one folder per run: BrowserReport
# A run: `make test-browser` names one for both of its pytest calls; a pytest call that is not
# given one is a run of its own. A session is one pytest call (its xdist workers included).
RUN_VAR, SESSION_VAR = "COURSE_BROWSER_RUN", "COURSE_BROWSER_SESSION"
WORKER_VAR = "PYTEST_XDIST_WORKER"  # xdist names each worker's process "gw0", "gw1", ...
CHROMIUM = Path("/usr/bin/chromium")
SCREEN = {"width": 1280, "height": 800}  # issue 27: a laptop's screen, where nothing may scroll
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
STARTUP_TIMEOUT_S = 120

# User settings written into the temporary settings dir. fetchNews/checkForUpdates: no news
# pop-up covering cells (FIELD_NOTES). windowingMode "none": every cell stays in the DOM, so the
# tests can read all outputs without scrolling each cell into view.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def notebook_names() -> list[str]:
    """The notebooks the suite opens: the course map's lessons (course.catalog.LESSONS), in order,
    then any other numbered notebook in the source folder. A lesson whose file does not exist
    yet is still listed: its tests skip and say so."""
    from course.catalog import LESSONS

    listed = [lesson.filename for lesson in LESSONS]
    extra = sorted(p.name for p in NOTEBOOK_SRC.glob("[0-9][0-9]_*.ipynb") if p.name not in listed)
    return listed + extra


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LabServer:
    """A running JupyterLab: where it listens, its token, and the REST calls the tests need."""

    url: str
    token: str
    root: Path
    process: subprocess.Popen
    log: Path
    startup_s: float = 0.0
    sessions: dict[str, str] = field(default_factory=dict)  # notebook path -> session id

    def api(self, method: str, path: str, body: dict | None = None) -> object:
        """Call the server's REST API with the token; returns the decoded JSON (or None)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
        return json.loads(text) if text else None

    def start_kernel_for(self, name: str) -> str:
        """Create the notebook's kernel session before the page opens (FIELD_NOTES: first-load
        race, where Run All right after start-up was silently lost); returns the kernel id."""
        session = self.api(
            "POST",
            "/api/sessions",
            {"path": name, "name": name, "type": "notebook", "kernel": {"name": "python3"}},
        )
        self.sessions[name] = session["id"]
        return session["kernel"]["id"]

    def kernel_state(self, kernel_id: str) -> str:
        """'starting', 'idle' or 'busy', as the server last heard from the kernel."""
        return self.api("GET", f"/api/kernels/{kernel_id}")["execution_state"]

    def stop_kernel_for(self, name: str) -> None:
        """Delete the notebook's session, which shuts its kernel down (frees its memory)."""
        session_id = self.sessions.pop(name, None)
        if session_id is not None:
            self.api("DELETE", f"/api/sessions/{session_id}")

    def lab_url(self, name: str, workspace: str) -> str:
        """A fresh named workspace per notebook, so no earlier tab is restored beside it."""
        return f"{self.url}/lab/workspaces/{workspace}/tree/{name}?token={self.token}"


def _write_settings(settings_dir: Path) -> None:
    for relative, values in LAB_SETTINGS.items():
        path = settings_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def _lab_command(port: int, token: str, root: Path) -> list[str]:
    jupyter = Path(sys.executable).with_name("jupyter")  # the project's own environment
    command = [
        str(jupyter),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.disable_check_xsrf=True",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: run commands like the menu does
        "--ServerApp.terminals_enabled=False",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    return command


def _wait_until_up(server: LabServer) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"JupyterLab exited with {server.process.returncode}:\n"
                + server.log.read_text()[-3000:]
            )
        try:
            server.api("GET", "/api/status")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.25)
    raise RuntimeError(
        f"JupyterLab did not answer within {STARTUP_TIMEOUT_S} s:\n"
        + server.log.read_text()[-3000:]
    )


def _stop_tree(process: subprocess.Popen, shutdown: callable) -> None:
    """Ask the server to shut down (it stops its kernels), then kill whatever is left of the
    process tree. Kernels run in their own process groups, so they are found as descendants."""
    try:
        descendants = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        descendants = []
    try:
        shutdown()
        process.wait(timeout=15)
    except Exception:  # a server that does not answer is killed below
        pass
    for proc in [*descendants, psutil.Process(process.pid) if process.poll() is None else None]:
        if proc is None:
            continue
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=15)


def pytest_configure(config: pytest.Config) -> None:
    """Register `run_all`. xdist's controller (or a lone pytest) names its session and the run
    here, before any worker starts (workers inherit both), and forgets earlier runs' records."""
    config.addinivalue_line(
        "markers", "run_all: Run All of a whole notebook (make test-browser runs two at a time)"
    )
    if hasattr(config, "workerinput"):
        # xdist's id of this session, the same in every worker: for a controller that did not
        # load this file (`pytest tests -m browser -n 2`), and so printed no report
        os.environ.setdefault(SESSION_VAR, config.workerinput["testrunuid"])
        os.environ.setdefault(RUN_VAR, config.workerinput["testrunuid"])
        return
    os.environ[SESSION_VAR] = secrets.token_hex(8)
    run = os.environ.setdefault(RUN_VAR, os.environ[SESSION_VAR])
    for old in RECORDS.glob("*"):
        if old.name != run:
            shutil.rmtree(old, ignore_errors=True)


@dataclass
class BrowserReport:
    """What browser tests measured, printed at the end of the run.

    Each test fills its own (the `browser_report` fixture), saved when the test ends, passed or
    not, as build/browser-records/<run>/<test>.json: workers and pytest calls share no memory,
    so the report and the checks across notebooks merge the run's files (`of_run`).
    """

    labs: list[float] = field(default_factory=list)  # per server: seconds until its API answered
    notebooks: dict[str, dict] = field(default_factory=dict)  # "notebooks/00_x.ipynb" -> row
    overflows: list[str] = field(default_factory=list)  # every panel found wider than its cell
    # axe's serious/critical findings in JupyterLab's own interface, per notebook: reported, not
    # failed on (the course cannot change JupyterLab's markup; its own content is asserted)
    frame_findings: dict[str, list[Finding]] = field(default_factory=dict)

    def save(self, name: str) -> None:
        """Write it into the run's folder, marked with the pytest session that made it."""
        folder = RECORDS / os.environ[RUN_VAR]
        folder.mkdir(parents=True, exist_ok=True)
        record = {"session": os.environ[SESSION_VAR], "report": asdict(self)}
        slug = re.sub(r"[^\w.-]+", "_", name)  # a test's node id, as a file name
        (folder / f"{slug}.json").write_text(json.dumps(record))

    @classmethod
    def of_run(cls, session: str | None = None) -> BrowserReport:
        """Everything this run recorded, or only what one pytest session of it recorded."""
        merged = cls()
        for path in sorted((RECORDS / os.environ[RUN_VAR]).glob("*.json")):
            record = json.loads(path.read_text())
            if session not in (None, record["session"]):
                continue
            saved = record["report"]
            merged.labs += saved["labs"]
            merged.notebooks.update(saved["notebooks"])
            merged.overflows += saved["overflows"]
            for name, found in saved["frame_findings"].items():
                merged.frame_findings[name] = [Finding(**finding) for finding in found]
        return merged


@pytest.fixture
def browser_report(request: pytest.FixtureRequest) -> Iterator[BrowserReport]:
    """This test's measurements; saved for the run's report when the test ends."""
    report = BrowserReport()
    yield report
    report.save(request.node.nodeid)


@pytest.fixture
def browser_run() -> BrowserReport:
    """What every test of this run recorded so far, whichever worker or pytest call ran it."""
    return BrowserReport.of_run()


def pytest_terminal_summary(terminalreporter) -> None:
    report = BrowserReport.of_run(session=os.environ[SESSION_VAR])
    if not report.notebooks and not report.labs:
        return
    write = terminalreporter.write_line
    terminalreporter.section("JupyterLab browser run")
    took = ", ".join(f"{seconds:.1f} s" for seconds in report.labs)
    servers = f" ({len(report.labs)} servers, one per worker)" if len(report.labs) > 1 else ""
    write(f"JupyterLab answered its REST API {took} after launch{servers}")
    # the references first, then the learner copies, each in the lessons' order
    for name, row in sorted(report.notebooks.items(), key=lambda i: ("learner/" in i[0], i[0])):
        retry = " (Run All retried)" if row["retried"] else ""
        write(
            f"{name}: {row['seconds']:.1f} s total, Run All {row['run_all_s']:.1f} s{retry}, "
            f"{row['panels']} panels; {'; '.join(row['actions']) or 'no widget driven'}"
        )
    for line in report.overflows:
        write(f"OVERFLOW {line}")
    _write_frame_findings(report, write)


def _write_frame_findings(report: BrowserReport, write) -> None:
    """JupyterLab's own accessibility findings: per notebook, how many of each rule (every code
    cell's editor repeats the same one), then one example of each rule."""
    if not report.frame_findings:
        return
    write("axe-core, JupyterLab's own interface (serious/critical; not the course's content):")
    examples = {}
    for name, found in sorted(report.frame_findings.items()):
        row = report.notebooks.get(name, {})  # absent when the test failed after axe ran
        took = f" (axe {row['axe_s']:.1f} s)" if "axe_s" in row else ""
        rules = Counter(finding.rule for finding in found)
        counts = ", ".join(f"{rule} x{count}" for rule, count in sorted(rules.items()))
        course = row.get("accessibility", "see the failure")
        write(f"  {name}{took}: {course} in the course's content; JupyterLab's: {counts or 'none'}")
        for finding in found:
            examples.setdefault(finding.rule, finding)
    for finding in examples.values():
        markup = " ".join(finding.html.split())[:110]
        write(f"  JUPYTERLAB [{finding.impact}] {finding.rule}: {finding.help} -- e.g. {markup}")


@pytest.fixture(scope="session")
def _stop_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM (a CI timeout, `timeout`) into KeyboardInterrupt so the fixtures' finally
    blocks still stop the server, kernels and browser."""

    def interrupt(_signum, _frame):
        raise KeyboardInterrupt("SIGTERM")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory, _stop_on_sigterm: None) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1, a free port and a random token, serving a copy of the notebooks."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "course"
    skip = shutil.ignore_patterns(".ipynb_checkpoints")
    shutil.copytree(NOTEBOOK_SRC, root / "notebooks", ignore=skip)
    if LEARNER_SRC.is_dir():
        shutil.copytree(LEARNER_SRC, root / "learner", ignore=skip)
    if ASSETS_SRC.is_dir():
        shutil.copytree(ASSETS_SRC, root / "assets", ignore=skip)
    _write_settings(base / "settings")
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(base / "config"),
        JUPYTERLAB_SETTINGS_DIR=str(base / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(base / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
    )
    port, token = free_port(), secrets.token_hex(24)
    log = base / "jupyterlab.log"
    started = time.perf_counter()
    with log.open("wb") as sink:
        process = subprocess.Popen(
            _lab_command(port, token, root),
            cwd=root,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = LabServer(f"http://127.0.0.1:{port}", token, root, process, log)
    try:
        _wait_until_up(server)
        server.startup_s = time.perf_counter() - started
        BrowserReport(labs=[server.startup_s]).save(f"lab-{os.environ.get(WORKER_VAR, 'alone')}")
        yield server
    finally:
        _stop_tree(process, lambda: server.api("POST", "/api/shutdown"))


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory, _stop_on_sigterm: None):
    """Debian's Chromium driven by Playwright, with a fresh profile; closed at the end."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} not found: install it with `apt-get install -y chromium`")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: `pip install -e '.[dev]'` installs it")
    profile = tmp_path_factory.mktemp("chromium-profile")
    playwright = sync_playwright().start()
    try:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=SCREEN,
        )
        try:
            yield context
        finally:
            # On SIGTERM the driver may already be gone (`timeout` signals the process group).
            with contextlib.suppress(Exception):
                context.close()
    finally:
        playwright.stop()
        _kill_leftover_chromium(profile)


def _kill_leftover_chromium(profile: Path) -> None:
    """Chromium processes of this run's profile that outlived close() (none, normally)."""
    for proc in psutil.process_iter(["cmdline"]):
        if any(str(profile) in arg for arg in proc.info["cmdline"] or []):
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
