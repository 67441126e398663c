"""Notebook 07's checkers: the scramble never shown, a kernel on every layout and value, a loop
that really tiles."""

from __future__ import annotations

import pytest
import torch

from course import journal
from course.exercises import check, get, instructor_mode, solution
from course.kernels import cpp
from course.kernels.cpp import build, learner
from course.kernels.exercises import compiled
from tests.corpus import assert_told_its_cause, corpus_cases

SCRAMBLE = "07.predict_scramble"


@pytest.fixture(autouse=True)
def new_learner(tmp_path, monkeypatch):
    """Each test a learner of its own: an empty journal, the naive kernel not run yet."""
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    build.NAIVE_RUNS.clear()  # in place: the harness notes into the same list


@pytest.fixture
def in_a_notebook(monkeypatch):
    monkeypatch.setattr(compiled, "_in_a_notebook", lambda: True)


CAUSES = {
    "07.predict_scramble": (
        "torch's (correct) answer",  # the right addcmul
        "2 rows of 3",  # shape (3, 2)
        "each exactly once",  # one cell off, with a 6 that t1 never held
        "as if its strides were (2, 1)",  # strides swapped
        "the naive kernel does write",  # zeros, as if the write were lost
        "computed by the course's code",  # naive_model's own output
        "for each memory slot i",  # reversed
        "each exactly once",  # counted from 1
        "the naive kernel does write",  # out's own zeros, as a tensor laid out like out
        "each exactly once",  # every value doubled
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
KERNEL_CAUSES = {
    "07.write_kernel": (
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
        "a transposed a and a b with a storage offset",  # b read through a's strides
        "a transposed a and a b with a storage offset",  # b read at a's index
        "a transposed a and a b with a storage offset",  # a's and b's offsets swapped
        "must be copied back",  # results left in a temporary
        "into the wrong elements of out",  # the temporary copied back in memory order
        "does not reach every index",  # sizes[0] for both dims
        "a 5-d output",  # up to four dims, hard-coded
        "used value 0.25",  # value * value
        "a 6-d output",  # five nested loops, as many dims as the notebook names
        "laid out alike that is right only when the elements have no gaps",  # naive if alike
        "an empty (4, 0) output",  # do { ... } while (++i < n): one body on no elements
        "left a 0-d output unchanged",  # an inner loop over sizes[ndim - 1]
        "an expanded (stride 0) input",  # stride[ndim - 1] == 1 taken for contiguous
        "keep the skeleton's signature",  # double value
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


@pytest.fixture(scope="module")
def kernels_run_together():
    """The wrong kernels checked in one child process: one torch import, not one per kernel."""
    learner.run_together([answer() for answer in get("07.write_kernel").wrong_answers])


@pytest.mark.compile
@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(KERNEL_CAUSES))
def test_each_wrong_kernel_is_told_its_cause(kernels_run_together, name, index, cause):
    assert_told_its_cause(name, index, cause)


@pytest.mark.parametrize("index", range(len(get(SCRAMBLE).wrong_answers)))
def test_scramble_feedback_never_shows_the_answer(index):
    reference = get(SCRAMBLE).reference()
    verdict = check(SCRAMBLE, get(SCRAMBLE).wrong_answers[index]())
    assert str(reference) not in str(verdict) and str(reference)[1:-1] not in str(verdict)


def test_a_typed_in_tensor_is_a_prediction_too_and_words_are_not():
    assert not check(SCRAMBLE, "zeros").passed
    assert check(SCRAMBLE, torch.tensor(get(SCRAMBLE).reference())).passed


def test_the_prediction_is_committed_once_and_survives_a_restart():
    reference = get(SCRAMBLE).reference()
    first = check(SCRAMBLE, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    assert not first.passed and "torch's (correct) answer" in first.message
    again = check(SCRAMBLE, reference)  # the same journal: a new kernel remembers it
    assert not again.passed and "a prediction is made once" in again.message
    assert "torch's (correct) answer" in again.message  # still judged as the first answer
    assert str(reference) not in again.message
    checks = [e for e in journal.load() if e.exercise == SCRAMBLE and e.event == "check"]
    assert len(checks) == 1  # the re-judged answer is not a new attempt


def test_the_right_prediction_rerun_passes_without_a_new_attempt():
    reference = get(SCRAMBLE).reference()
    assert check(SCRAMBLE, reference).passed
    assert check(SCRAMBLE, reference).passed  # the cell run again, after a restart
    assert sum(e.event == "check" for e in journal.load()) == 1
    changed = check(SCRAMBLE, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    assert not changed.passed
    assert "that answer counts, not this one. It was right" in changed.message


def test_malformed_answers_commit_nothing():
    assert "2 rows of 3" in check(SCRAMBLE, [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]).message
    assert journal.prediction(SCRAMBLE) is None
    assert check(SCRAMBLE, get(SCRAMBLE).reference()).passed


def _refused_after(experiment, named: str) -> None:
    answer = experiment()  # the gap: a list computed by the course's code before answering
    verdict = check(SCRAMBLE, answer)
    assert not verdict.passed and "already ran in this kernel" in verdict.message
    assert named in verdict.message and "would not be a prediction" in verdict.message
    assert journal.prediction(SCRAMBLE) is None  # nothing committed: a restart, then predict


def test_an_answer_after_the_naive_model_ran_in_the_notebook_is_refused(in_a_notebook):
    _refused_after(lambda: cpp.naive_model(*compiled.scramble_case()).tolist(), "naive_model(...)")


@pytest.mark.compile
def test_an_answer_after_the_compiled_naive_kernel_ran_is_refused(in_a_notebook):
    cpp.load()
    _refused_after(
        lambda: cpp.apply("naive", *compiled.scramble_case()).tolist(), "cpp.apply('naive'"
    )
    build.NAIVE_RUNS.clear()
    _refused_after(lambda: cpp.op("naive")(*compiled.scramble_case()).tolist(), "cpp.op('naive')")


def test_outside_a_notebook_earlier_runs_are_not_the_learners():
    """A test run calls naive_model everywhere; only a learner's kernel is held to the order."""
    cpp.naive_model(*compiled.scramble_case())
    assert check(SCRAMBLE, get(SCRAMBLE).reference()).passed


def test_the_checkers_own_run_of_the_naive_model_is_not_the_learners(in_a_notebook):
    assert not check(SCRAMBLE, [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]).passed
    assert build.NAIVE_RUNS == []


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


def test_a_tensor_laid_out_like_out_is_refused_only_with_the_kernels_values():
    """Out's own zeros, typed as a tensor, are a prediction (a wrong one): judged, not refused."""
    computed = torch.arange(6.0).reshape(3, 2).t()  # the naive kernel's values, out's strides
    assert "not predicted" in check(SCRAMBLE, computed).message
    assert journal.prediction(SCRAMBLE) is None
    judged = check(SCRAMBLE, torch.zeros(3, 2).t())
    assert "the naive kernel does write" in judged.message


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
