"""07.tiles: a loop that really tiles, each element updated once, whatever its values."""

from __future__ import annotations

from course.kernels.exercises.compiled import tiles
from tests.corpus import corpus_tests
from tests.kernels.exercises.compiled.corpus_tiles import CORPORA

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_tile_cases_vary_shape_tile_layout_and_value():
    cases = tiles.TILE_CASES
    assert len({c[2] for c in cases}) >= 3 and len({c[3] for c in cases}) >= 4
    assert any(c[1] > max(c[0]) for c in cases)  # a tile larger than the matrix
    assert any(s % c[1] for c in cases for s in c[0])  # ragged edges
