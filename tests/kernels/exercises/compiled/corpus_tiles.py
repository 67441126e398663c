"""07.tiles' test data: the notebook's tiled loop, right loops written in other styles, and loops
each wrong in one way, with the words their feedback must contain."""

from __future__ import annotations

import itertools
import math

import torch

from tests.corpus import Corpus


def tiles():
    def tiled_addcmul_(out, t1, t2, value, tile):
        rows, cols = out.shape
        for r0 in range(0, rows, tile):
            for c0 in range(0, cols, tile):
                block = (slice(r0, r0 + tile), slice(c0, c0 + tile))
                out[block].addcmul_(t1[block], t2[block], value=value)
        return out

    return tiled_addcmul_


def wrong(
    stop_short=False, overlap=False, swapped=False, fixed_value=None, fixed_tile=None, copy=False
):
    """A factory of the reference's loop with one slip."""

    def tiled_addcmul_(out, t1, t2, value, tile):
        tile = fixed_tile or tile
        value = value if fixed_value is None else fixed_value
        work = out.contiguous() if copy else out
        rows, cols = work.shape
        step = tile - 1 if overlap and tile > 1 else tile
        row_end = rows // tile * tile if stop_short else rows
        col_end = cols // tile * tile if stop_short else cols
        for r0 in range(0, row_end, step):
            for c0 in range(0, col_end, step):
                rs, cs = slice(r0, r0 + tile), slice(c0, c0 + tile)
                block = (cs, rs) if swapped else (rs, cs)
                work[block].addcmul_(t1[block], t2[block], value=value)
        return work

    return lambda: tiled_addcmul_


def _one_call(out, t1, t2, value, tile):
    return out.addcmul_(t1, t2, value=value)


def _walks_rows(out, t1, t2, value, tile):
    for r in range(out.shape[0]):
        out[r].addcmul_(t1[r], t2[r], value=value)
    return out


def _new_tensor(out, t1, t2, value, tile):
    result = torch.empty_like(out)
    for r0 in range(0, out.shape[0], tile):
        for c0 in range(0, out.shape[1], tile):
            block = (slice(r0, r0 + tile), slice(c0, c0 + tile))
            result[block] = torch.addcmul(out[block], t1[block], t2[block], value=value)
    return result


def by(blocks, value_of=lambda value: value, second=None):
    """A factory of a tiled loop over the blocks `blocks(rows, cols, tile)` gives, with one slip
    in the value (`value_of`) or in which block of t2 it reads (`second`)."""

    def tiled_addcmul_(out, t1, t2, value, tile):
        for block in blocks(*out.shape, tile):
            other = block if second is None else second(block, tile)
            out[block].addcmul_(t1[block], t2[other], value=value_of(value))
        return out

    return lambda: tiled_addcmul_


def _square(rows, cols, tile):  # both loops bounded by the row count
    return [
        (slice(r, r + tile), slice(c, c + tile))
        for r in range(0, rows, tile)
        for c in range(0, rows, tile)
    ]


def _one_short(rows, cols, tile):  # a block of tile - 1, as if the slice's end were included
    return [
        (slice(r, r + tile - 1), slice(c, c + tile - 1))
        for r in range(0, rows, tile)
        for c in range(0, cols, tile)
    ]


def _last_tile_dropped(rows, cols, tile):  # range(0, rows - tile, tile)
    return [
        (slice(r, r + tile), slice(c, c + tile))
        for r in range(0, rows - tile, tile)
        for c in range(0, cols - tile, tile)
    ]


def _every_tile(rows, cols, tile):
    return [
        (slice(r, r + tile), slice(c, c + tile))
        for r in range(0, rows, tile)
        for c in range(0, cols, tile)
    ]


def doing(update):
    """A factory of a tiled loop over every tile whose update of one block, update(out_block,
    t1_block, t2_block, value), is not out += value * t1 * t2."""

    def tiled_addcmul_(out, t1, t2, value, tile):
        for block in _every_tile(*out.shape, tile):
            update(out[block], t1[block], t2[block], value)
        return out

    return lambda: tiled_addcmul_


def _first_block_of_t2(block, tile):  # t2's first tile, cut to the block's size
    rows, cols = (s.stop - s.start for s in block)
    return (slice(0, rows), slice(0, cols))


def _chained_slices(out, t1, t2, value, tile):
    for r0 in range(0, out.shape[0], tile):
        for c0 in range(0, out.shape[1], tile):  # [r0:..][c0:..] slices the rows twice
            rows, cols = slice(r0, r0 + tile), slice(c0, c0 + tile)
            out[rows][cols].addcmul_(t1[rows][cols], t2[rows][cols], value=value)
    return out


def _numpy_rows(out, t1, t2, value, tile):
    mine, a, b = out.numpy(), t1.numpy(), t2.numpy()
    for r in range(mine.shape[0]):
        mine[r] = mine[r] + value * a[r] * b[r]
    return out


def _through_numpy(out, t1, t2, value, tile):
    mine, a, b = out.numpy(), t1.numpy(), t2.numpy()
    for block in _every_tile(*out.shape, tile):
        mine[block] += value * a[block] * b[block]
    return out


def _into_t1(out, t1, t2, value, tile):
    t1.addcmul_(out, t2, value=value)
    out.copy_(t1)


# Right tiled loops in styles other than the reference's.
def _column_major_tiles(out, t1, t2, value, tile):
    rows, cols = out.shape
    for c0 in range(0, cols, tile):
        for r0 in range(0, rows, tile):
            for r in range(r0, min(r0 + tile, rows)):  # a tile walked row by row
                block = (r, slice(c0, c0 + tile))
                out[block].addcmul_(t1[block], t2[block], value=value)


def _past_the_edge(out, t1, t2, value, tile):
    """Blocks past the matrix are empty writes: judged, never a crash."""
    for r0 in range(0, out.shape[0] + tile, tile):  # one more row of tiles, all empty
        for c0 in range(0, out.shape[1], tile):
            block = (slice(r0, r0 + tile), slice(c0, c0 + tile))
            out[block].addcmul_(t1[block], t2[block], value=value)


def _plus_equals(out, t1, t2, value, tile):
    """`out[block] += x` runs add_ on the view, then Python stores the view back into itself
    (copy_ of a view onto itself): that second write changes nothing and is not counted."""
    for r0 in range(0, out.shape[0], tile):
        for c0 in range(0, out.shape[1], tile):
            block = (slice(r0, r0 + tile), slice(c0, c0 + tile))
            out[block] += value * t1[block] * t2[block]


def _while(out, t1, t2, value, tile):
    r = 0
    while r < out.shape[0]:
        c = 0
        while c < out.shape[1]:
            out[r : r + tile, c : c + tile].addcmul_(
                t1[r : r + tile, c : c + tile], t2[r : r + tile, c : c + tile], value=value
            )
            c += tile
        r += tile


def _product(out, t1, t2, value, tile):
    rows, cols = out.shape
    for r0, c0 in itertools.product(range(0, rows, tile), range(0, cols, tile)):
        b = (slice(r0, min(r0 + tile, rows)), slice(c0, min(c0 + tile, cols)))
        torch.addcmul(out[b], t1[b], t2[b], value=value, out=out[b])
    return out


def _iadd(out, t1, t2, value, tile):
    for i in range(0, out.size(0), tile):
        for j in range(0, out.size(1), tile):
            out[i : i + tile, j : j + tile] += (
                value * t1[i : i + tile, j : j + tile] * t2[i : i + tile, j : j + tile]
            )
    return out


def _add_alpha(out, t1, t2, value, tile):
    for c0 in range(0, out.shape[1], tile):  # column tiles outer
        for r0 in range(0, out.shape[0], tile):
            o = out.narrow(1, c0, min(tile, out.shape[1] - c0)).narrow(
                0, r0, min(tile, out.shape[0] - r0)
            )
            a = t1[r0 : r0 + tile, c0 : c0 + tile]
            b = t2[r0 : r0 + tile, c0 : c0 + tile]
            o.add_(a * b, alpha=value)
    return out


def _assign(out, t1, t2, value, tile):
    for r0 in range(0, out.shape[0], tile):
        for c0 in range(0, out.shape[1], tile):
            b = (slice(r0, r0 + tile), slice(c0, c0 + tile))
            out[b] = torch.addcmul(out[b], t1[b], t2[b], value=value)
    return out


def _blocks_list(out, t1, t2, value, tile):
    blocks = [
        (slice(r, r + tile), slice(c, c + tile))
        for r in range(0, out.shape[0], tile)
        for c in range(0, out.shape[1], tile)
    ]
    for b in blocks:
        out[b].addcmul_(t1[b], t2[b], value=value)


def _double(out, t1, t2, value, tile):
    for r0 in range(0, out.shape[0], tile):
        for c0 in range(0, out.shape[1], tile):
            b = (slice(r0, r0 + tile), slice(c0, c0 + tile))
            out[b].add_((value * t1[b].double() * t2[b].double()).to(out.dtype))
    return out


def _elements_in_tile(out, t1, t2, value, tile):
    rows, cols = out.shape
    for r0 in range(0, rows, tile):
        for c0 in range(0, cols, tile):
            for r in range(r0, min(r0 + tile, rows)):
                for c in range(c0, min(c0 + tile, cols)):
                    out[r, c] += value * t1[r, c] * t2[r, c]
    return out


def _ceil(out, t1, t2, value, tile):
    n_r, n_c = math.ceil(out.shape[0] / tile), math.ceil(out.shape[1] / tile)
    for i in range(n_r):
        for j in range(n_c):
            rs = slice(i * tile, (i + 1) * tile)
            cs = slice(j * tile, (j + 1) * tile)
            out[rs, cs].addcmul_(t1[rs, cs], t2[rs, cs], value=value)
    return out


RIGHT = (
    _through_numpy,
    _column_major_tiles,
    _past_the_edge,
    _plus_equals,
    _while,
    _product,
    _iadd,
    _add_alpha,
    _assign,
    _blocks_list,
    _double,
    _elements_in_tile,
    _ceil,
)
CORPORA = (
    Corpus(
        "07.tiles",
        tiles,
        wrong={
            "stops short of the ragged edge": (
                wrong(stop_short=True),
                "not a multiple of the tile",
            ),
            "steps by tile - 1": (wrong(overlap=True), "tiles overlap"),
            "rows and columns swapped": (wrong(swapped=True), "each walk their own dimension"),
            "one library call": (lambda: _one_call, "one call on the whole matrix"),
            "a row per call": (lambda: _walks_rows, "walks rows"),
            "out.contiguous() of a transposed out": (wrong(copy=True), "updated a copy of out"),
            "a new result": (lambda: _new_tensor, "returned your results in a new tensor"),
            "the value hard-coded": (wrong(fixed_value=0.5), "value 0.5"),
            "a fixed 2 x 2 block": (wrong(fixed_tile=2), "tile argument"),
            "both loops bounded by the row count": (by(_square), "out need not be square"),
            "slice(r0, r0 + tile - 1)": (by(_one_short), "a block needs no - 1"),
            "range(0, rows - tile, tile)": (by(_last_tile_dropped), "the last one included"),
            "abs(value)": (by(_every_tile, value_of=abs), "used value 1.25"),
            "t2's first tile every time": (
                by(_every_tile, second=_first_block_of_t2),
                "the same block of t1 and of t2",
            ),
            "out[r0:r1][c0:c1]": (lambda: _chained_slices, "slices the rows twice"),
            "numpy views of out, row by row": (lambda: _numpy_rows, "your loop walks rows"),
            "out[block].copy_(value * t1 * t2)": (
                doing(lambda out, a, b, value: out.copy_(value * a * b)),
                "instead of adding it to what they held",
            ),
            "addcmul_ without value, then the block scaled by value": (
                doing(lambda out, a, b, value: out.addcmul_(a, b).mul_(value)),
                "and then mul_",
            ),
            "value added, not multiplied": (
                doing(lambda out, a, b, value: out.add_(a * b + value)),
                "gets value * t1 * t2 added",
            ),
            "writes into t1": (lambda: _into_t1, "wrote into an input"),
        },
        right={f.__name__.strip("_").replace("_", " "): (lambda f=f: f) for f in RIGHT},
    ),
)
