"""Notebook 07's checkers: the scramble never shown, a kernel on every layout and value, a loop
that really tiles."""

from __future__ import annotations

import pytest
import torch

from course.exercises import check, get, instructor_mode, solution
from course.kernels.exercises import compiled
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "07.predict_scramble": (
        "torch's (correct) answer",  # the right addcmul
        "2 rows of 3",  # shape (3, 2)
        "cells you have right",  # one cell off
        "as if its strides were (2, 1)",  # strides swapped
        "the naive kernel does write",  # zeros, as if the write were lost
        "computed by the course's code",  # naive_model's own output
        "for each memory slot i",  # reversed
    ),
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
    ),
}
KERNEL_CAUSES = {
    "07.write_kernel": (
        "as if a and b were laid out like out",  # the skeleton
        "as if a and b were laid out like out",  # flat, with offsets
        "as if a and b were laid out like out",  # the output's strides for all three
        "an output with a storage offset",  # no offsets
        "inputs with a storage offset",  # the output's offset only
        "a permuted 3-d output",  # two dims only
        "a 4-d output",  # up to three dims
        "used value 0.5",  # value hard-coded
        "ignored `value`",  # value ignored
        "overwrote out",  # = instead of +=
        "wrote into an input",  # a.data[x] += ...
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


@pytest.mark.compile
@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(KERNEL_CAUSES))
def test_each_wrong_kernel_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_scramble_feedback_never_shows_the_answer():
    reference = get("07.predict_scramble").reference()
    assert check("07.predict_scramble", reference).passed
    assert check("07.predict_scramble", torch.tensor(reference)).passed  # a typed-in tensor
    for index in range(len(get("07.predict_scramble").wrong_answers)):
        verdict = check("07.predict_scramble", get("07.predict_scramble").wrong_answers[index]())
        assert str(reference) not in str(verdict)
    assert not check("07.predict_scramble", "zeros").passed


def test_the_solution_shows_the_kernel_itself():
    instructor_mode(True)
    try:
        shown = solution("07.write_kernel")
    finally:
        instructor_mode(False)
    assert 'extern "C" void my_addcmul_' in shown and "lambda" not in shown
    assert compiled.REFERENCE_KERNEL in shown


def test_tile_cases_vary_shape_tile_layout_and_value():
    cases = compiled.TILE_CASES
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
