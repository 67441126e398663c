"""Notebook 07's tiled loop: out += value * t1 * t2, one tile x tile block at a time.

`07.tiles` runs the learner's loop on hidden shapes, tiles, layouts and values (every
write into `out` is recorded, so a loop that is one library call, walks rows or writes into a
copy is told so, whatever its values). Writes through numpy views of `out` (`out.numpy()`
shares its memory) are recorded too: a tiled loop in numpy is as tiled as one in torch.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from course.exercises import Exercise, Verdict, failed, is_scaffold, passed, register
from course.layout.named import laid_out

TILE_CASES: tuple[tuple[tuple[int, int], int, str, float], ...] = (
    # (shape, tile, output layout, value)
    ((8, 8), 4, "contiguous", 0.5),
    ((64, 48), 16, "transposed", -1.25),
    ((7, 5), 3, "transposed", 2.0),
    ((1, 10), 4, "contiguous", 0.5),
    ((5, 5), 8, "transposed", -0.5),
    ((33, 17), 8, "step-sliced", 1.5),
)


OVERWRITES = {"copy_", "fill_", "zero_", "empty", "set_"}  # writes that ignore what was there
UNCHANGED = ("out unchanged", "out updated")
ONCE = "every element updated exactly once"


def _storage_key(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def _slots(t: torch.Tensor) -> list[int]:
    """The slots of its storage a tensor covers, in its element order."""
    size = t.untyped_storage().nbytes() // t.element_size()
    return torch.arange(size).as_strided(t.shape, t.stride(), t.storage_offset()).flatten().tolist()


class Write(NamedTuple):
    """One op's write: into which storage, and which of its slots (the written view's)."""

    op: str
    storage: int
    slots: list[int]


class WriteLog(TorchDispatchMode):
    """Every tensor an op writes while active (the schema's mutable arguments and out=)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[Write] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        written = [] if _copy_onto_itself(func, args) else _written(func, args, kwargs)
        result = func(*args, **kwargs)
        op = func._schema.name.removeprefix("aten::")
        self.writes += [Write(op, _storage_key(t), _slots(t)) for t in written]
        return result


def _copy_onto_itself(func, args: tuple) -> bool:
    """Whether this is `view.copy_(view)`: what `out[block] += x` does after its add_ (Python
    stores the updated view back into out[block]); each element gets its own value, no update."""
    if func is not torch.ops.aten.copy_.default or len(args) < 2:
        return False
    dst, src = args[0], args[1]
    return isinstance(src, torch.Tensor) and _layout_of(dst) == _layout_of(src)


def _layout_of(t: torch.Tensor) -> tuple:
    return (_storage_key(t), tuple(t.shape), t.stride(), t.storage_offset(), t.dtype)


class _WatchedArray(np.ndarray):
    """`out.numpy()` as the checker hands it: each write through it (or a view of it), by
    assignment or an in-place ufunc such as `+=`, is noted in `writes` as a write into out."""

    writes: list[Write] | None = None  # the WriteLog's list while a check runs
    key: int = 0  # out's storage

    def __setitem__(self, index, value) -> None:
        target = self[index]
        same = (
            isinstance(value, np.ndarray)
            and value.__array_interface__ == target.__array_interface__
        )
        if not same:  # `a[i] += x` stores the updated view back onto itself: no second write
            _note_numpy(target, "setitem")
        super().__setitem__(index, value)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        plain = [x.view(np.ndarray) if isinstance(x, _WatchedArray) else x for x in inputs]
        if out is None:
            return getattr(ufunc, method)(*plain, **kwargs)
        for written in out:
            if isinstance(written, _WatchedArray):
                _note_numpy(written, ufunc.__name__)
        bare = tuple(o.view(np.ndarray) if isinstance(o, _WatchedArray) else o for o in out)
        getattr(ufunc, method)(*plain, out=bare, **kwargs)
        return out[0] if len(out) == 1 else out


def _note_numpy(array: np.ndarray, op: str) -> None:
    """The slots of out's storage a numpy view covers, noted as one write (`op`)."""
    cls = _WatchedArray
    if cls.writes is None or array.size == 0:
        return
    start = (array.__array_interface__["data"][0] - cls.key) // array.itemsize
    slots = np.full(array.shape, start, dtype=np.int64)
    for dim, step in enumerate(array.strides):
        shape = [1] * array.ndim
        shape[dim] = array.shape[dim]
        slots += np.arange(array.shape[dim]).reshape(shape) * (step // array.itemsize)
    cls.writes.append(Write(f"numpy {op}", cls.key, slots.flatten().tolist()))


@contextmanager
def _numpy_watched(out: torch.Tensor, writes: list[Write]) -> Iterator[None]:
    """While active, out.numpy() (and its views) note their writes in `writes`."""
    original = torch.Tensor.numpy
    own = "numpy" in vars(torch.Tensor)  # inherited from TensorBase: put nothing back on Tensor

    def numpy(self, *, force: bool = False) -> np.ndarray:
        array = original(self, force=force)
        return array.view(_WatchedArray) if _storage_key(self) == _storage_key(out) else array

    _WatchedArray.writes, _WatchedArray.key = writes, _storage_key(out)
    torch.Tensor.numpy = numpy
    try:
        yield
    finally:
        if own:
            torch.Tensor.numpy = original
        else:
            del torch.Tensor.numpy
        _WatchedArray.writes = None


def _written(func, args: tuple, kwargs: dict) -> list[torch.Tensor]:
    """The tensors an op's schema marks as written (`Tensor(a!)`)."""
    found = []
    for index, argument in enumerate(func._schema.arguments):
        if argument.alias_info is not None and argument.alias_info.is_write:
            value = args[index] if index < len(args) else kwargs.get(argument.name)
            found += [value] if isinstance(value, torch.Tensor) else []
    return found


def check_tiles(fn) -> Verdict:
    """07.tiles: the learner's loop updates out tile by tile, each element once, on hidden
    shapes, tiles, layouts and values; every write into out is recorded."""
    if not callable(fn):
        return failed("give a function, e.g. def tiled_addcmul_(out, t1, t2, value, tile): ...")
    gen = torch.Generator().manual_seed(3)
    for shape, tile, layout, value in TILE_CASES:
        out = laid_out(torch.randn(shape, generator=gen), layout)
        t1, t2 = torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)
        case = TileCase(shape, tile, layout, value, out, t1, t2)
        verdict = case.check(fn)
        if verdict is not None:
            return verdict
    return passed(
        f"right on {len(TILE_CASES)} shapes, tiles, layouts and values, ragged edges and tiles "
        "larger than the matrix included: every element updated exactly once, one tile finished "
        "before the next"
    )


@dataclass
class TileCase:
    """One hidden call of the learner's tiled loop, and what its recorded writes show."""

    shape: tuple[int, int]
    tile: int
    layout: str
    value: float
    out: torch.Tensor
    t1: torch.Tensor
    t2: torch.Tensor

    @property
    def where(self) -> str:
        return (
            f"on a {self.shape} {self.layout} output with tile {self.tile} and value {self.value}"
        )

    def check(self, fn) -> Verdict | None:
        """None when right; else a failed verdict naming the first problem the writes show."""
        before, inputs = self.out.clone(), (self.t1.clone(), self.t2.clone())
        expected = torch.addcmul(before, self.t1, self.t2, value=self.value)
        try:
            with WriteLog() as log, _numpy_watched(self.out, log.writes):
                returned = fn(self.out, self.t1, self.t2, self.value, self.tile)
        except Exception as exc:
            if is_scaffold(exc):
                raise
            return failed(f"{self.where} your function raised {type(exc).__name__}: {exc}")
        if not (torch.equal(self.t1, inputs[0]) and torch.equal(self.t2, inputs[1])):
            return failed(
                f"{self.where} your function wrote into an input (t1 or t2): only out is updated"
            )
        key = _storage_key(self.out)
        mine = [w for w in log.writes if w.storage == key and w.slots]  # an empty block: none
        if not mine:
            return self._never_written(returned, before, log)
        cols, slots = self.out.shape[1], _slots(self.out)
        cell_of = {slot: divmod(i, cols) for i, slot in enumerate(slots)}  # slot -> (row, col)
        if any(s not in cell_of for w in mine for s in w.slots):
            return failed(f"{self.where} your function wrote outside out's elements")
        cells = [[cell_of[s] for s in w.slots] for w in mine]
        return (
            self._twice_in_a_row(cells, [w.op for w in mine])
            or self._coverage(cells)
            or self._values(before, expected)
            or self._tiling(cells)
        )

    def _twice_in_a_row(self, cells: list[list[tuple[int, int]]], ops: list[str]) -> Verdict | None:
        """Two ops in turn on one block (addcmul_, then mul_ by value): each element is updated
        twice, and that is no overlap of tiles."""
        for i in range(len(cells) - 1):
            if cells[i] and sorted(cells[i]) == sorted(cells[i + 1]):
                return failed(
                    f"{self.where} each block is written by {ops[i]} and then {ops[i + 1]}, so "
                    "every element is updated twice: out += value * t1 * t2 is one op per "
                    "block, out[block].addcmul_(t1[block], t2[block], value=value)",
                    f"{ops[i]}, then {ops[i + 1]}",
                    "one addcmul_ per block",
                )
        return None

    def _never_written(self, returned, before: torch.Tensor, log: WriteLog) -> Verdict:
        updated = [w.op for w in log.writes if w.op not in OVERWRITES]
        if not torch.equal(self.out, before):
            return failed(
                f"{self.where} out changed, but through no write the checker can see (np.asarray, "
                "a raw pointer?): the checker records each write into out, through torch or "
                "out.numpy(), to see your tiles. Update out[block].addcmul_(...), or "
                "out.numpy()[block] += ...",
            )
        if updated:
            return failed(
                f"{self.where} your loop updated a copy of out, not out ({updated[0]} into "
                "another tensor): out.contiguous() or clone() of a non-contiguous out is a new "
                "tensor, and writes into it are lost, the Placeholder's bug again. Slice out "
                "itself: out[block].addcmul_(...)",
                *UNCHANGED,
            )
        if isinstance(returned, torch.Tensor) and returned is not self.out:
            return failed(
                f"{self.where} you returned your results in a new tensor, but out itself never "
                "changed: the caller keeps out, so update it in place (out[block].addcmul_(...))",
                *UNCHANGED,
            )
        return failed(f"{self.where} out never changed", *UNCHANGED)

    def _coverage(self, cells: list[list[tuple[int, int]]]) -> Verdict | None:
        count = torch.zeros(self.shape, dtype=torch.int64)
        for r, c in (cell for written in cells for cell in written):
            count[r, c] += 1
        if (count > 1).any():
            r, c = (count > 1).nonzero()[0].tolist()
            return failed(
                f"{self.where} element ({r}, {c}) was updated {int(count[r, c])} times: do your "
                "tiles overlap? Step the loops by the tile size",
                f"{int((count > 1).sum())} elements updated twice or more",
                ONCE,
            )
        if (count == 0).any():
            r, c = (count == 0).nonzero()[0].tolist()
            return failed(
                f"{self.where} element ({r}, {c}) was never updated: {self._missed(count == 0)}",
                f"{int((count == 0).sum())} of {count.numel()} elements never updated",
                ONCE,
            )
        return None

    def _missed(self, missed: torch.Tensor) -> str:
        """Why these elements were never updated, read from which ones they are."""
        (rows, cols), tile = self.shape, self.tile
        row = torch.arange(rows)[:, None].expand(rows, cols)
        col = torch.arange(cols)[None, :].expand(rows, cols)
        ragged_rows, ragged_cols = row >= rows // tile * tile, col >= cols // tile * tile
        if any(missed.equal(m) for m in (ragged_rows, ragged_cols, ragged_rows | ragged_cols)):
            return (
                "do your tiles reach the last rows and columns when the size is not a "
                "multiple of the tile? (a slice past the end simply stops at the edge)"
            )
        if tile > 1 and bool(((row % tile == tile - 1) | (col % tile == tile - 1))[missed].all()):
            return (
                "each tile's last row or column is missing: slice(r0, r0 + tile) already "
                "stops before r0 + tile, so a block needs no - 1"
            )
        return (
            "do your loops reach every tile, the last one included, and do your row loop and "
            "column loop each walk their own dimension (rows: range(0, out.shape[0], tile); "
            "columns: range(0, out.shape[1], tile))? out need not be square"
        )

    def _values(self, before: torch.Tensor, expected: torch.Tensor) -> Verdict | None:
        if torch.allclose(self.out, expected, atol=1e-5):
            return None
        if torch.allclose(self.out, expected - before, atol=1e-5):
            return failed(
                f"{self.where} your loop replaced out's blocks with value * t1 * t2 instead of "
                "adding it to what they held (copy_ or = where addcmul_ belongs): the update is "
                "out += value * t1 * t2",
            )
        product, added = (self.t1 * self.t2).flatten(), (self.out - before).flatten()
        used = float(added @ product / (product @ product))
        if abs(used - self.value) > 1e-3 and torch.allclose(added, used * product, atol=1e-4):
            return failed(
                f"{self.where} your loop used value {used:.3g}, not the value passed in",
                f"value {used:.3g}",
                f"value {self.value}",
            )
        return failed(
            f"{self.where} some elements got wrong values: each block of out gets value * t1 * t2 "
            "added, from the same block of t1 and of t2 (the same slices for all three)",
            "",
            "torch's addcmul_",
        )

    def _tiling(self, cells: list[list[tuple[int, int]]]) -> Verdict | None:
        (rows, cols), tile = self.shape, self.tile
        if len(cells) == 1 and not (rows <= tile and cols <= tile):
            return failed(
                f"{self.where} your loop made one call on the whole matrix: that is not tiled. "
                "Cut out into tile x tile blocks and update one block per call",
                "1 call",
                "one call per tile",
            )
        visited: list[tuple[int, int]] = []
        for written in cells:
            tiles = {(r // tile, c // tile) for r, c in written}
            if len(tiles) > 1:
                return self._across_tiles(written, tiles)
            (here,) = tiles
            if visited and visited[-1] != here and here in visited:
                return failed(
                    f"{self.where} your loop leaves tile {here} and comes back to it later: "
                    "finish one tile x tile block before the next (are your blocks the size of "
                    "the tile argument? do you walk rows element by element?)",
                    "tiles revisited",
                    "each tile finished at once",
                )
            visited.append(here)
        return None

    def _across_tiles(self, written: list[tuple[int, int]], tiles: set) -> Verdict:
        """One call that covers parts of several tiles: a row, whole rows, or misplaced blocks."""
        in_rows = {r for r, _ in written}
        if len(in_rows) == 1:
            return failed(
                f"{self.where} your loop walks rows: one call covers row {in_rows.pop()} "
                "across several tiles. A tiled loop finishes a tile x tile block before the next",
                "a row per call",
                "a tile per call",
            )
        if len({c for _, c in written}) == self.shape[1] > self.tile:
            return failed(
                f"{self.where} one call covers whole rows, every column: a block is "
                "out[r0:r0 + tile, c0:c0 + tile], both dims in one index (out[a:b][c:d] "
                "slices the rows twice)",
                "whole rows per call",
                "a tile per call",
            )
        return failed(
            f"{self.where} one call covers parts of {len(tiles)} tiles: blocks must be "
            "tile x tile, starting at multiples of the tile",
        )


register(
    Exercise(
        name="07.tiles",
        prompt="Write tiled_addcmul_(out, t1, t2, value, tile): out += value * t1 * t2 for a 2-d "
        "out, in place, one tile x tile block at a time (finish a block before the next), every "
        "element exactly once.",
        checker=check_tiles,
        hint="Two loops over the tiles' top-left corners, each stepping by tile; a slice past "
        "the end simply stops at the edge. Update the block of out itself, in place, with "
        "addcmul_ on the same block of each input: a sliced view writes into out.",
        minutes=15,
    )
)
