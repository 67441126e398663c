"""Training and its History: what is recorded, and which arguments are refused."""

from __future__ import annotations

import pytest
import torch

from course.errors import CourseError
from course.model.data import make_data
from course.model.sae import TopKSAE
from course.model.training import History, check_args, make_optimizer, train

DATA = make_data(128, 16, 32, 3, seed=0)


def small_model(init: str = "contiguous") -> TopKSAE:
    return TopKSAE(d_model=16, n_features=32, k=4, init=init)


def test_history_records_every_step_and_the_state():
    calls = []
    history = train(
        small_model(), DATA, steps=6, batch_size=16, progress=lambda *a: calls.append(a)
    )
    assert len(history.loss) == 6 and [c[0] for c in calls] == list(range(1, 7))
    assert set(history.change) == {
        "encoder.weight",
        "encoder.bias",
        "decoder.weight",
        "decoder.bias",
    }
    assert all(len(v) == 6 for v in history.change.values())
    assert history.frozen["decoder.weight"] is False
    assert history.exp_avg_sq_max["encoder.weight"] > 0
    assert history.layout["encoder.weight"]["contiguous"] is True


def test_final_loss_is_the_mean_of_the_last_tenth():
    history = History(loss=[float(i) for i in range(20)])
    assert history.tail == 2 and history.final_loss == 18.5
    assert History(loss=[4.0]).final_loss == 4.0


def test_aux_loss_weight_changes_the_run_but_not_its_shape():
    plain = train(small_model(), DATA, steps=4, batch_size=16)
    aux = train(small_model(), DATA, steps=4, batch_size=16, aux_weight=0.5)
    assert len(aux.loss) == len(plain.loss)
    assert aux.change["encoder.weight"] != plain.change["encoder.weight"]


def test_sgd_moves_a_transposed_weight_on_the_cpu():
    history = train(small_model("transposed"), DATA, steps=2, batch_size=8, optimizer="sgd")
    assert history.frozen["encoder.weight"] is False and not history.exp_avg_max


def test_training_draws_batches_from_its_own_generator():
    torch.manual_seed(5)
    expected = torch.rand(2)
    torch.manual_seed(5)
    train(small_model(), DATA, steps=2, batch_size=8)
    assert torch.equal(torch.rand(2), expected)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"steps": True}, "steps=True"),
        ({"steps": 0}, "steps=0"),
        ({"steps": 2.5}, "steps=2.5"),
        ({"batch_size": 10**7}, "batch_size=10000000 .*from 1 to 8192"),
        ({"lr": 0.0}, "lr=0.0"),
        ({"schedule": "linear"}, "schedule='linear'"),
        ({"seed": "x"}, "seed='x'"),
        ({"aux_weight": -1.0}, "aux_weight=-1.0"),
        ({"optimizer": "rmsprop"}, "optimizer='rmsprop'"),
        ({"betas": "x"}, "betas='x' is not allowed: give two numbers"),
        ({"betas": (0.9,)}, r"betas=\(0.9,\)"),
        ({"betas": (0.9, 1.0)}, "not including 1"),
        ({"betas": (True, 0.9)}, "betas=\\(True, 0.9\\)"),
    ],
)
def test_bad_arguments_are_refused_before_training(kwargs, match):
    args = {"steps": 2, "lr": 1e-3, "batch_size": 8, "schedule": "constant", **kwargs}
    with pytest.raises(CourseError, match=match):
        check_args(**args)


def test_make_optimizer_names_the_choices():
    params = [torch.nn.Parameter(torch.zeros(2))]
    assert isinstance(make_optimizer("sgd", params, 0.1), torch.optim.SGD)
    with pytest.raises(CourseError, match="'adam', 'sgd'"):
        make_optimizer("lion", params, 0.1)


def test_run_refuses_bad_betas_before_training():
    """Issue 37: run(betas="x") reached torch.optim.Adam and its raw TypeError."""
    from course.model.runs import run, trainer

    with pytest.raises(CourseError, match="betas='x'"):
        run(betas="x", steps=2)
    with pytest.raises(CourseError, match="betas=0.9"):
        trainer(betas=0.9)
