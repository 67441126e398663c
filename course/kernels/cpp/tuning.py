"""The tiled kernel's tile shape for this machine: from its cache sizes, or a short autotune.

A tile is fast while its buffer and the cache lines it touches stay in the L2 cache. The shape
that does so on one machine overflows a smaller L2 or wastes a larger one, and a shape fixed in
the C++ source was 1.46x of native on the machine it was tuned on and 1.9x on another. So the
kernel takes its shape at run time (`use`), and there are two ways to choose it:

- `tile_for(caches)`: a rule from the cache sizes read at run time (course.kernels.cpp.bench's
  `cache_sizes`: sysfs, getconf or sysctl, else DEFAULT_L2);
- `autotune()`: the rule's shape and its neighbours, each timed in shared rounds on a transposed
  output larger than the last-level cache; the fastest is kept in the course's cache folder,
  keyed by CPU model, cache sizes, torch version and the kernel's source, so that another
  machine, an upgrade or an edited kernel tunes again, and nothing else does.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import math
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from course.devices import pinned_threads
from course.errors import CourseError
from course.kernels.cpp.bench import (
    BYTES,
    MAX_NUMEL,
    VALUE,
    CacheSizes,
    Spread,
    cache_sizes,
    run_rounds,
    shape_for,
)
from course.kernels.cpp.build import NAMESPACE, build_dir, load, op, sources

DEFAULT_L2 = 512 << 10  # where the L2 is unknown: the size the built-in 64 x 256 tile suits
TILE_SHARE = 32  # a tile of n floats touches ~16n bytes (buffer, 2 inputs, output): half the L2
MIN_I, MAX_I, MIN_J, MAX_J = 16, 256, 64, 4096
# A round times every candidate once (about 20 ms each at the tuning size): 11 rounds take a
# few seconds, and their median stands where a median of 3 follows one disturbed round on a busy
# machine.
ROUNDS = 11
CPU_INFO = Path("/proc/cpuinfo")


@dataclass(frozen=True, order=True)
class Tile:
    """A tile's shape: i output elements per column (the output's fastest dim) by j input
    elements per row (the inputs' fastest dim)."""

    i: int
    j: int

    def __str__(self) -> str:
        return f"{self.i} x {self.j}"

    @classmethod
    def parse(cls, text: str) -> Tile:
        """'64x256' (or '64 x 256') -> Tile(64, 256); the sides the C++ accepts, or CourseError."""
        parts = text.lower().replace(" ", "").split("x")
        if len(parts) != 2 or not all(part.isdigit() for part in parts):
            raise CourseError(f"a tile is written IxJ, e.g. 64x256; got {text!r}")
        tile = cls(int(parts[0]), int(parts[1]))
        if not valid(tile):
            raise CourseError(f"tile sides must be multiples of 4 from 4 to 4096; got {tile}")
        return tile


def valid(tile: Tile) -> bool:
    """What the C++ setter accepts: multiples of 4 (pass 2's 4 x 4 blocks) from 4 to 4096."""
    return all(4 <= side <= 4096 and side % 4 == 0 for side in (tile.i, tile.j))


def _power_of_two_below(x: float) -> int:
    return 1 << max(0, math.floor(math.log2(max(x, 1))))


def tile_for(caches: CacheSizes) -> Tile:
    """The rule: a tile of L2 / TILE_SHARE floats, i about half the square root (output
    columns at least 4 cache lines), j the rest (input rows at least 16 lines)."""
    area = (caches.l2 or DEFAULT_L2) // TILE_SHARE
    i = min(MAX_I, max(MIN_I, _power_of_two_below(math.sqrt(area / 4))))
    return Tile(i, min(MAX_J, max(MIN_J, area // i)))


def candidates(rule: Tile) -> list[Tile]:
    """The rule's tile first, then its neighbours: each side halved or doubled, j up to 4x."""
    shapes = [Tile(rule.i * a // 2, rule.j * b // 2) for a in (2, 1, 4) for b in (2, 1, 4, 8)]
    return list(dict.fromkeys(tile for tile in shapes if valid(tile)))


def tuning_size(caches: CacheSizes) -> int:
    """Elements of the output timed: three tensors at least twice the last-level cache (so
    the tiles are timed against memory, as at the benchmark's 16M), a power of two."""
    llc = caches.llc or 32 << 20
    numel = 1 << 20
    while 3 * numel * BYTES < 2 * llc and numel < MAX_NUMEL:
        numel <<= 1
    return numel


def cpu_model(cpuinfo: Path = CPU_INFO) -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what Python's platform module says."""
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_key(caches: CacheSizes, model: str | None = None) -> str:
    """What a tuned tile holds for: CPU model, cache sizes, torch version, kernel source."""
    source = hashlib.sha256(b"".join(path.read_bytes() for path in sources())).hexdigest()[:12]
    sizes = f"L1d {caches.l1d}, L2 {caches.l2}, LLC {caches.llc}"
    return f"{model or cpu_model()} | {sizes} | torch {torch.__version__} | kernel {source}"


def cache_file() -> Path:
    """Tuned tiles, one per machine key, next to the compiled kernels."""
    return build_dir() / "tiles.json"


@dataclass(frozen=True)
class Tuned:
    """The chosen tile and how: 'cached' (an earlier autotune with this key) or 'autotuned'
    (then `seconds` holds each candidate's median)."""

    tile: Tile
    how: str
    key: str
    seconds: dict[Tile, float]


def time_tiles(tiles: list[Tile], numel: int) -> dict[Tile, float]:
    """Median seconds of the tiled kernel with each tile on a transposed output of `numel`
    elements, one thread, in shared rotated rounds (course.kernels.cpp.bench's method)."""
    rows, cols = shape_for(numel)
    gen = torch.Generator().manual_seed(0)
    t1, t2 = torch.randn(rows, cols, generator=gen), torch.randn(rows, cols, generator=gen)
    out = torch.zeros(cols, rows).t()
    tiled = op("tiled")

    def call(tile: Tile) -> Callable[[], object]:
        return lambda: (use(tile), tiled(out, t1, t2, value=VALUE))

    with pinned_threads(1):
        samples = run_rounds({tile: call(tile) for tile in tiles}, ROUNDS, 0.0, time.thread_time)
    return {tile: Spread.of(seconds).median for tile, seconds in samples.items()}


def _read(path: Path) -> dict[str, dict[str, int]]:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def autotune(
    caches: CacheSizes | None = None,
    *,
    path: Path | None = None,
    timer: Callable[[list[Tile], int], dict[Tile, float]] = time_tiles,
    retune: bool = False,
    model: str | None = None,
) -> Tuned:
    """This machine's tile: the cached one for its key, else the fastest candidate, cached.

    `caches` defaults to what this machine reports; passing others (a smaller L2, say) tunes
    as if on a machine with those caches: another key, another candidate set, timed here.
    """
    caches = caches or cache_sizes()
    path = path or cache_file()
    key = machine_key(caches, model)
    known = _read(path)
    if not retune and key in known:
        entry = known[key]
        return Tuned(Tile(int(entry["i"]), int(entry["j"])), "cached", key, {})
    seconds = timer(candidates(tile_for(caches)), tuning_size(caches))
    best = min(seconds, key=seconds.__getitem__)
    known[key] = {"i": best.i, "j": best.j}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    return Tuned(best, "autotuned", key, seconds)


@functools.cache
def _library() -> ctypes.CDLL:
    """The compiled kernels' library (the one load() registered), for its C entry point."""
    load()
    library = ctypes.CDLL(str(build_dir() / f"{NAMESPACE}.so"))
    library.course_kernels_set_tile.argtypes = [ctypes.c_int64, ctypes.c_int64]
    library.course_kernels_set_tile.restype = ctypes.c_int
    return library


def use(tile: Tile) -> None:
    """Make the tiled kernel's later calls, in this process, use `tile`."""
    if not valid(tile) or _library().course_kernels_set_tile(tile.i, tile.j) != 0:
        raise CourseError(f"tile sides must be multiples of 4 from 4 to 4096; got {tile}")
