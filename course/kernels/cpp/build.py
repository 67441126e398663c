"""Compile the course's C++ kernels on the learner's machine, once, and register them as ops.

Why this shape:
- The kernel sources are real `.cpp` files shipped in this folder (read them!), compiled at run
  time with `torch.utils.cpp_extension.load` into a per-user cache folder, so the first build
  takes ~30-60 s and every later one (also in a new process) is a cache hit.
- The op schemas are defined here, from Python, with `torch.library.Library(NAMESPACE, "DEF")`;
  the C++ holds only `TORCH_LIBRARY_IMPL`. A second `TORCH_LIBRARY` for one namespace in one
  process aborts the process, whereas re-registering implementations only warns, so an edited
  kernel can be rebuilt and reloaded without restarting the notebook's kernel.
- No precompiled headers: `use_pch` writes ~800 MB into torch's install folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from course.errors import CourseError

NAMESPACE = "course_kernels"
SOURCE_DIR = Path(__file__).resolve().parent
SCHEMA = "(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)"
OP_NAMES = ("addcmul_naive_", "addcmul_strided_", "addcmul_iterator_", "addcmul_tiled_")
STALE_LOCK_S = 600  # a build lock older than this belongs to a build that was killed
_STATE: dict[str, object] = {}


class CompilerMissing(CourseError):
    """No working C++ toolchain: notebook cells catch this and print a skip message."""


@dataclass(frozen=True)
class CompilerStatus:
    """What the C++ part of the course needs, as found on this machine."""

    compiler: str | None  # path of the C++ compiler torch will call
    compiler_version: str
    ninja: bool

    @property
    def ok(self) -> bool:
        return self.compiler is not None and self.ninja

    def message(self) -> str:
        """One line for the doctor and for skip messages."""
        if self.ok:
            return f"C++ compiler {self.compiler} ({self.compiler_version}) and ninja found"
        missing = [
            name
            for name, found in (
                ("a C++ compiler (g++ or clang++)", self.compiler),
                ("ninja (pip install ninja)", self.ninja),
            )
            if not found
        ]
        return "cannot compile the C++ kernels: missing " + " and ".join(missing)


def compiler_status() -> CompilerStatus:
    """Probe the compiler torch.utils.cpp_extension would use ($CXX or c++) and ninja."""
    from torch.utils.cpp_extension import is_ninja_available

    name = os.environ.get("CXX", "c++")
    path = shutil.which(name)
    version = ""
    if path is not None:
        try:
            done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20)
            version = done.stdout.splitlines()[0] if done.returncode == 0 and done.stdout else ""
        except (OSError, subprocess.SubprocessError):
            path = None
        if not version:
            path = None
    return CompilerStatus(path, version, is_ninja_available())


def build_dir() -> Path:
    """Where compiled kernels are cached: $TORCH_EXTENSIONS_DIR, else the user's cache folder."""
    if os.environ.get("TORCH_EXTENSIONS_DIR"):
        return Path(os.environ["TORCH_EXTENSIONS_DIR"]) / NAMESPACE
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "pytorch-internals-course" / "cpp"


def sources(source_dir: Path = SOURCE_DIR) -> list[Path]:
    """The .cpp files of the extension (all of them build into ONE library: one compile)."""
    found = sorted(Path(source_dir).glob("*.cpp"))
    if not found:
        raise CourseError(f"no .cpp sources in {source_dir}: is the course installed completely?")
    return found


def define_schemas() -> None:
    """Declare the ops from Python, once per process (the C++ only implements them)."""
    if "library" in _STATE:
        return
    if hasattr(torch.ops, NAMESPACE) and _defined(OP_NAMES[0]):
        return  # defined by an earlier copy of this module (e.g. after importlib.reload)
    library = torch.library.Library(NAMESPACE, "DEF")
    for name in OP_NAMES:
        library.define(name + SCHEMA)
    _STATE["library"] = library


def _defined(name: str) -> bool:
    try:
        getattr(getattr(torch.ops, NAMESPACE), name)
    except (AttributeError, RuntimeError):
        return False
    return True


def is_cached(folder: Path | None = None, source_dir: Path = SOURCE_DIR) -> bool:
    """Whether a build newer than every source is in the cache (the next load is instant)."""
    built = (folder or build_dir()) / f"{NAMESPACE}.so"
    if not built.exists():
        return False
    return all(src.stat().st_mtime <= built.stat().st_mtime for src in sources(source_dir))


def load(source_dir: Path | None = None, force: bool = False) -> None:
    """Compile (first time only) and load the kernels; afterwards `torch.ops.course_kernels.*`.

    With `source_dir` (a folder of edited copies of the .cpp files) the edited kernels are built
    in `source_dir/build` and registered over the current ones, in this same process.
    """
    if _STATE.get("loaded") and not force and source_dir is None:
        return
    status = compiler_status()
    if not status.ok:
        raise CompilerMissing(status.message())
    define_schemas()
    from torch.utils.cpp_extension import load as load_extension

    source_dir = Path(source_dir) if source_dir is not None else SOURCE_DIR
    folder = build_dir() if source_dir == SOURCE_DIR else source_dir / "build"
    folder.mkdir(parents=True, exist_ok=True)
    clear_stale_lock(folder)
    fresh = not is_cached(folder, source_dir)
    if fresh:
        print("compiling the course's C++ kernels... (first time ~30-60 s)", flush=True)
    start = time.perf_counter()
    try:
        load_extension(
            name=NAMESPACE,
            sources=[str(s) for s in sources(source_dir)],
            build_directory=str(folder),
            extra_cflags=["-O3"],
            is_python_module=False,
            verbose=False,
        )
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        raise CourseError(f"building the C++ kernels in {folder} failed: {_tail(exc)}") from exc
    if fresh:
        print(f"compiled and loaded in {time.perf_counter() - start:.0f} s", flush=True)
    _STATE["loaded"] = True


def clear_stale_lock(folder: Path, max_age_s: float = STALE_LOCK_S) -> bool:
    """Remove a build lock left by a killed build; cpp_extension would otherwise wait forever."""
    lock = folder / "lock"
    if not lock.exists() or time.time() - lock.stat().st_mtime < max_age_s:
        return False
    print(f"removing a stale build lock from an interrupted build: {lock}", flush=True)
    lock.unlink(missing_ok=True)
    return True


def _tail(exc: BaseException, lines: int = 15) -> str:
    text = str(exc) + "\n" + str(getattr(exc, "output", "") or "")
    return "\n".join(text.strip().splitlines()[-lines:])


def op(name: str):
    """One compiled op by its short name ("naive", "strided", "iterator"), loading if needed."""
    full = f"addcmul_{name}_"
    if full not in OP_NAMES:
        allowed = ", ".join(n.removeprefix("addcmul_").rstrip("_") for n in OP_NAMES)
        raise CourseError(f"no compiled kernel {name!r}; choose one of: {allowed}")
    load()
    return getattr(getattr(torch.ops, NAMESPACE), full)
