"""Fresh Python processes without paying for `import torch` in each one.

Tests that need a process whose imports start fresh (what one process has imported says nothing
about another) spent ~3.5 s each on a 2-core machine, most of it importing torch. One helper
process per pytest worker imports torch, and nothing from `course`, once; each run is a child
forked from it, which starts from that state. The child runs the code as `python -c CODE`
started in ROOT would: its own `__main__`, argv `['-c']`, the given environment in `os.environ`
(`sys.path` is the helper's, ROOT first), stdin empty, exit handlers run at its end; its exit
code, stdout and stderr come back as a `subprocess.CompletedProcess`. Where there is no fork
(Windows), each run is a fresh `python -c` instead.
"""

from __future__ import annotations

import atexit
import functools
import io
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRELOADED = ("torch",)  # what every test's fresh process would otherwise import again
SERVE = f"from {__name__} import serve\nserve()\n"


def python(
    code: str, env: dict[str, str] | None = None, *, timeout: float
) -> subprocess.CompletedProcess:
    """What `python -c CODE` run in ROOT with `env` (default: this process's) does, returned as
    `subprocess.run(..., capture_output=True, text=True)` would."""
    env = dict(os.environ if env is None else env)
    if not hasattr(os, "fork"):
        command = [sys.executable, "-c", code]
        return subprocess.run(
            command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout
        )
    helper = _helper()
    pickle.dump((code, env, timeout), helper.stdin)
    helper.stdin.flush()
    try:
        returncode, out, err = pickle.load(helper.stdout)
    except EOFError:
        raise RuntimeError(f"the fork helper died (exit code {helper.wait()})") from None
    if returncode is None:
        raise subprocess.TimeoutExpired(["python", "-c", code], timeout, _text(out), _text(err))
    return subprocess.CompletedProcess(["python", "-c", code], returncode, _text(out), _text(err))


@functools.cache
def _helper() -> subprocess.Popen:
    """This worker's helper, started on first use and closed (end of its input) at exit."""
    helper = subprocess.Popen(
        [sys.executable, "-c", SERVE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    atexit.register(_close, helper)
    return helper


def _close(helper: subprocess.Popen) -> None:
    helper.stdin.close()
    helper.wait()


def _text(data: bytes) -> str:
    """Decoded as `subprocess.run(..., text=True)` decodes: locale encoding, universal newlines."""
    return io.TextIOWrapper(io.BytesIO(data)).read()


def serve() -> None:
    """The helper's loop: one request (code, env, timeout) in, one child, its result out.

    The requests and replies travel on this process's stdin and stdout, moved to other file
    descriptors so that no child can read or write them by accident."""
    for name in PRELOADED:
        __import__(name)
    loaded = [n for n in sys.modules if n.partition(".")[0] in ("course", "ipywidgets")]
    assert not loaded, f"the fork helper must start children without {loaded}"
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    _point(0, os.devnull, os.O_RDONLY)
    _point(1, os.devnull, os.O_WRONLY)
    while True:
        try:
            code, env, timeout = pickle.load(requests)
        except EOFError:
            return
        pickle.dump(_fork(code, env, timeout, (requests, replies)), replies)
        replies.flush()


def _point(fd: int, path: str, flags: int) -> None:
    """Make `fd` refer to `path`."""
    opened = os.open(path, flags)
    os.dup2(opened, fd)
    os.close(opened)


def _fork(code: str, env: dict[str, str], timeout: float, channel: tuple) -> tuple:
    """(exit code, stdout, stderr) of a child that runs `code`; exit code None past `timeout`."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os._exit(_child(code, env, (out, err), channel))
        returncode = _wait(pid, timeout)
        out.seek(0)
        err.seek(0)
        return returncode, out.read(), err.read()


def _child(code: str, env: dict[str, str], outputs: tuple, channel: tuple) -> int:
    """In the child: drop the helper's channel, write to `outputs`, run `code`; its exit code.

    Nothing may escape from here, or the child would go on serving in the helper's loop."""
    try:
        for stream in channel:
            stream.close()
        os.dup2(outputs[0].fileno(), 1)
        os.dup2(outputs[1].fileno(), 2)
        return _run(code, env)
    except BaseException:  # noqa: BLE001 - a failure of the helper itself, not of `code`
        traceback.print_exc()
        return 70  # EX_SOFTWARE


def _wait(pid: int, timeout: float) -> int | None:
    """The child's exit code (negative: the signal that ended it); None if killed at `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.002)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def _run(code: str, env: dict[str, str]) -> int:
    """In the child: run `code` as `python -c` would (exit handlers too); its exit code."""
    os.environ.clear()
    os.environ.update(env)
    sys.argv = ["-c"]
    for name in (__name__, __name__.rpartition(".")[0]):  # the helper's own modules
        sys.modules.pop(name, None)
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    try:
        exec(compile(code, "<string>", "exec"), main.__dict__)
        returncode = 0
    except SystemExit as stop:
        returncode = _exit_code(stop.code)
    except BaseException as error:  # noqa: BLE001 - reported as the interpreter would report it
        traceback.print_exception(type(error), error, error.__traceback__.tb_next)
        returncode = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    return returncode


def _exit_code(code: object) -> int:
    """The process exit code that `sys.exit(code)` gives (a message is printed and gives 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
