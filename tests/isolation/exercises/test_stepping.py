"""02.sgd_step and 02.encoder_moves: a lost write never passes, and how a step ran is seen."""

from __future__ import annotations

import pytest
import torch

from course.exercises import check, get
from course.isolation.exercises import stepping
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "02.sgd_step": (
        "bound to the local name `p`",  # p = p - lr * p.grad
        "put new tensors into the list",  # params[i] = ...
        "slice assignment",  # params[:] = [...]
        "`p.data = ...` swaps in another tensor",  # p.data = p.data - ...
        "never sees a return value",  # returns the new tensors
        "biases too",  # 2-D weights only
        "changed p.grad",  # scales the gradient in place
        "called torch.optim.SGD",  # torch's own SGD
        "leaf Variable",  # no torch.no_grad()
        "ignored lr",  # p -= p.grad
        "uphill",  # p += lr * p.grad
        "the contiguous ones moved: your write went into a copy",  # p.contiguous().sub_
        "on contiguous CPU parameters your step works",  # p.detach().cpu().sub_
        "a write into a copy",  # p.clone().sub_
        "0.001 times its gradient",  # lr written in as 1e-3
        "0.5 times its gradient",  # 2 * lr
        "0.0625 times its gradient",  # lr * lr
        "without rounding or a lower precision",  # the step rounded to float16
    ),
    "02.encoder_moves": (
        "took no step with `update`",  # always False
        "allclose",  # torch.allclose
        "A `before` that is the parameter itself",  # an alias, not a snapshot
        "without bench.backward()",  # no backward
        "encoder.weight's own snapshots",  # watches the decoder
        "The bench must be active",  # optimizer stepped outside the bench
        "stepped Adam, but the update it was given was SGD",  # ignores `update`
        "the first rows",  # compares the first rows
        "a sum",  # compares sums
        "the wrong way round",  # did_not_move's answer, not negated
        "ONE step",  # two steps
        "without bench.backward() before it",  # step, then backward
        "does not come from its values",  # answers from the optimizer's class
        "A `before` that is the parameter itself",  # .cpu() of a CPU parameter: an alias
        "compare every element of encoder.weight exactly",  # |diff| < 1e-6
        "compare every element of encoder.weight exactly",  # compared in float16
        "compare every element of encoder.weight exactly",  # compares means
        "not every other row",  # every other row
        "or the first columns",  # the first columns
        "not from a proxy such as exp_avg_sq",  # moved read from exp_avg_sq
        "lr = 0.001, and the `update` it was given has lr = 1e-08",  # its own Adam
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


@pytest.mark.parametrize("index", [0, 1, 2, 3, 4])  # name, list entry, slice, .data, return
def test_every_write_that_misses_the_parameters_is_called_a_lost_write(index):
    verdict = check("02.sgd_step", get("02.sgd_step").wrong_answers[index]())
    assert "a lost write" in verdict.message.lower()


def test_a_rebinding_of_list_entries_is_a_lost_write_even_through_the_bench():
    """The issue's case: the list is rebound, the model's parameters never change."""
    bench = stepping.MOVES_VARIANTS[2].bench()
    bench.backward()
    before = bench.snapshot()["encoder.weight"]
    bench.step(lambda params: stepping._list_entry_sgd_step()(params, 1e-3))
    assert torch.equal(before, bench.snapshot()["encoder.weight"])
    verdict = check("02.sgd_step", stepping._list_entry_sgd_step())
    assert not verdict.passed and "lost write" in verdict.message.lower()


@pytest.mark.parametrize(
    "step",
    [
        lambda params, lr: [p.data.sub_(lr * p.grad) for p in params],
        lambda params, lr: [p.detach().copy_(p.detach() - lr * p.grad) for p in params],
    ],
    ids=["data.sub_", "detach().copy_"],
)
def test_other_in_place_steps_pass(step):
    assert check("02.sgd_step", step).passed


def test_encoder_moves_wants_a_bool():
    verdict = check("02.encoder_moves", lambda bench, update: "yes")
    assert not verdict.passed and "return True or False" in verdict.message


def test_stepping_inside_with_bench_is_the_bench_stepping():
    def encoder_moves(bench, update):
        bench.backward()
        before = bench.snapshot()["encoder.weight"]
        made = update(list(bench.model.parameters()))
        with bench:
            if made is not None:
                made.step()
        return not torch.equal(before, bench.snapshot()["encoder.weight"])

    assert check("02.encoder_moves", encoder_moves).passed


def test_expected_moves_differ_across_benches():
    found = {stepping._expected_moves(i) for i in range(len(stepping.MOVES_VARIANTS))}
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
