"""07.tiles: a loop that really tiles, each element updated once, whatever its values."""

from __future__ import annotations

import pytest

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
