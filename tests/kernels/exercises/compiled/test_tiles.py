"""07.tiles: a loop that really tiles, each element updated once, whatever its values."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from course.exercises import check
from course.kernels.exercises.compiled import tiles
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "07.tiles": (
        "not a multiple of the tile",  # stops short of the ragged edge
        "tiles overlap",  # steps by tile - 1
        "each walk their own dimension",  # rows and columns swapped
        "one call on the whole matrix",  # one library call
        "walks rows",  # a row per call
        "updated a copy of out",  # out.contiguous() of a transposed out
        "returned your results in a new tensor",  # a new result
        "value 0.5",  # the value hard-coded
        "tile argument",  # a fixed 2 x 2 block
        "out need not be square",  # both loops bounded by the row count
        "a block needs no - 1",  # slice(r0, r0 + tile - 1)
        "the last one included",  # range(0, rows - tile, tile)
        "used value 1.25",  # abs(value)
        "the same block of t1 and of t2",  # t2's first tile every time
        "slices the rows twice",  # out[r0:r1][c0:c1]
        "through no torch op",  # written through numpy
        "instead of adding it to what they held",  # out[block].copy_(value * t1 * t2)
        "and then mul_",  # addcmul_ without value, then the block scaled by value
        "gets value * t1 * t2 added",  # value added, not multiplied
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_tile_cases_vary_shape_tile_layout_and_value():
    cases = tiles.TILE_CASES
    assert len({c[2] for c in cases}) >= 3 and len({c[3] for c in cases}) >= 4
    assert any(c[1] > max(c[0]) for c in cases)  # a tile larger than the matrix
    assert any(s % c[1] for c in cases for s in c[0])  # ragged edges


def test_tiles_in_another_order_or_smaller_blocks_inside_a_tile_pass():
    def column_major_tiles(out, t1, t2, value, tile):
        rows, cols = out.shape
        for c0 in range(0, cols, tile):
            for r0 in range(0, rows, tile):
                for r in range(r0, min(r0 + tile, rows)):  # a tile walked row by row
                    block = (r, slice(c0, c0 + tile))
                    out[block].addcmul_(t1[block], t2[block], value=value)

    assert check("07.tiles", column_major_tiles).passed


def test_a_loop_that_writes_into_an_input_is_told_so():
    def into_t1(out, t1, t2, value, tile):
        t1.addcmul_(out, t2, value=value)
        out.copy_(t1)

    assert "wrote into an input" in check("07.tiles", into_t1).message


def test_empty_blocks_past_the_edge_are_no_writes():
    """A loop whose blocks run past the matrix makes empty writes: judged, never a crash."""

    def past_the_edge(out, t1, t2, value, tile):
        for r0 in range(0, out.shape[0] + tile, tile):  # one more row of tiles, all empty
            for c0 in range(0, out.shape[1], tile):
                block = (slice(r0, r0 + tile), slice(c0, c0 + tile))
                out[block].addcmul_(t1[block], t2[block], value=value)

    assert check("07.tiles", past_the_edge).passed


def test_out_block_plus_equals_is_one_update_per_element():
    """`out[block] += x` runs add_ on the view, then Python stores the view back into itself
    (copy_ of a view onto itself): that second write changes nothing and is not counted."""

    def plus_equals(out, t1, t2, value, tile):
        for r0 in range(0, out.shape[0], tile):
            for c0 in range(0, out.shape[1], tile):
                block = (slice(r0, r0 + tile), slice(c0, c0 + tile))
                out[block] += value * t1[block] * t2[block]

    verdict = check("07.tiles", plus_equals)
    assert verdict.passed, verdict.message


# Right tiled loops in styles other than the reference's: each must pass.
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


@pytest.mark.parametrize(
    "tiled_addcmul_",
    [
        _while,
        _product,
        _iadd,
        _add_alpha,
        _assign,
        _blocks_list,
        _double,
        _elements_in_tile,
        _ceil,
    ],
)
def test_right_tiled_loops_in_other_styles_pass(tiled_addcmul_):
    verdict = check("07.tiles", tiled_addcmul_)
    assert verdict.passed, verdict.message
