"""02.encoder_moves: which optimizer moves the encoder, read from the bench's step log."""

from __future__ import annotations

import torch

from course.exercises import check
from course.isolation.exercises import moves
from tests.corpus import corpus_tests
from tests.isolation.exercises import corpus_stepping

CORPORA = tuple(c for c in corpus_stepping.CORPORA if c.name == "02.encoder_moves")


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_encoder_moves_wants_a_bool():
    verdict = check("02.encoder_moves", lambda bench, update: "yes")
    assert not verdict.passed and "return True or False" in verdict.message


def test_expected_moves_differ_across_benches():
    found = {moves.expected(i) for i in range(len(moves.VARIANTS))}
    assert found == {True, False}


def test_an_sgd_with_its_own_learning_rate_is_named():
    """The update handed in is the one to step, with its settings, for SGD as for Adam."""

    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()["encoder.weight"]
        made = update(list(bench.model.parameters()))
        if isinstance(made, torch.optim.SGD):
            made = torch.optim.SGD(bench.model.parameters(), lr=1e-3)
        with bench:
            if made is not None:
                made.step()
        return not torch.equal(before, bench.snapshot()["encoder.weight"])

    verdict = check("02.encoder_moves", encoder_moves)
    assert "your SGD ran with lr = 0.001, and the `update` it was given has lr = 0.01" in (
        verdict.message
    )
