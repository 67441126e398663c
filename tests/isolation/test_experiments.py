"""The bench: one model on one device and profile, and the moves every experiment is made of."""

from __future__ import annotations

from functools import partial

import pytest
import torch

from course import emps
from course.errors import CourseError
from course.isolation import experiments
from course.isolation.experiments import ENCODER

SMALL = {"d_model": 16, "n_features": 32, "k": 4}


def encoder_moved(bench, update) -> bool:
    bench.backward()
    before = bench.snapshot()[ENCODER]
    bench.step(update)
    return not torch.equal(before, bench.snapshot()[ENCODER])


def test_bench_builds_the_story_model_on_the_emulated_device():
    bench = experiments.bench(**SMALL)
    weight = bench.parameter(ENCODER)
    assert str(weight.device) == "emps:0" and weight.stride() == (1, 32)
    assert bench.batch().shape == (128, 16)


def test_backward_sets_every_gradient_and_returns_the_loss():
    bench = experiments.bench(**SMALL)
    loss = bench.backward()
    assert loss > 0 and all(p.grad is not None for p in bench.model.parameters())


def test_snapshot_is_a_cpu_copy():
    bench = experiments.bench(**SMALL)
    shot = bench.snapshot()
    assert shot[ENCODER].device.type == "cpu"
    with torch.no_grad():
        bench.parameter(ENCODER).add_(1.0)
    assert not torch.equal(shot[ENCODER], bench.snapshot()[ENCODER])


def test_step_follows_the_bench_profile():
    assert encoder_moved(experiments.bench(**SMALL), experiments.sgd()) is True
    assert encoder_moved(experiments.bench(**SMALL), experiments.adam()) is False
    assert encoder_moved(experiments.bench("fixed-macos14", **SMALL), experiments.adam()) is True
    assert encoder_moved(experiments.bench(device="cpu", **SMALL), experiments.adam()) is True
    contiguous = experiments.bench(init="contiguous", **SMALL)
    assert encoder_moved(contiguous, experiments.adam()) is True


def test_step_takes_an_optimizer_a_factory_or_a_step_function():
    bench = experiments.bench(**SMALL)
    bench.backward()
    made = bench.step(experiments.adam())
    assert isinstance(made, torch.optim.Adam) and bench.step(made) is made
    calls = []
    assert bench.step(partial(lambda params, lr: calls.append((len(params), lr)), lr=0.1)) is None
    assert calls == [(4, 0.1)]
    with pytest.raises(CourseError, match="not int"):
        bench.step(3)


def test_with_bench_runs_your_own_code_on_its_profile():
    bench = experiments.bench("macos15", **SMALL)
    with bench:
        assert emps.current_profile().name == "macos15"
    assert emps.current_profile().name == emps.DEFAULT_PROFILE


def test_float64_is_refused_by_the_device_as_the_real_one_does():
    with pytest.raises(TypeError, match="float64"):
        experiments.bench(dtype=torch.float64, **SMALL)
    cpu = experiments.bench(device="cpu", dtype=torch.float64, **SMALL)
    assert cpu.parameter(ENCODER).dtype == torch.float64 and cpu.backward() > 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"profile": "2.3"}, "unknown emulated profile '2.3'"),
        ({"device": "tpu"}, "device='tpu'"),
        ({"dtype": torch.int64}, "dtype=torch.int64"),
        ({"batch_size": 0}, "batch_size=0"),
        ({"batch_size": 10**6}, "batch_size=1000000"),
        ({"seed": "x"}, "seed='x'"),
        ({"k": 0}, "k=0"),
    ],
)
def test_bad_bench_arguments_are_refused(kwargs, match):
    with pytest.raises(CourseError, match=match):
        experiments.bench(**{**SMALL, **kwargs})


def test_unknown_parameter_names_list_the_real_ones():
    with pytest.raises(CourseError, match="encoder.weight"):
        experiments.bench(**SMALL).parameter("encoder")


def test_versions_and_metadata_tables():
    rows = experiments.versions_rows()
    assert rows[0]["version"] == "PyTorch 2.2.1 on macOS 14 (emulated)"
    assert rows[1]["version"] == torch.__version__
    meta = experiments.metadata_rows(experiments.bench(**SMALL).model)
    assert [r["contiguous"] for r in meta] == ["NO", "yes"]
    assert meta[0]["stride"] == [1, 32]


def test_the_bench_logs_every_step_on_its_parameters_and_where_it_ran():
    bench = experiments.bench(device="cpu", **SMALL)
    bench.backward()
    adam = bench.step(experiments.adam(betas=(0.5, 0.0)))
    bench.step(adam)
    bench.step(partial(lambda params, lr: None, lr=0.1))
    sgd = torch.optim.SGD(bench.model.parameters(), lr=0.1)
    sgd.step()
    other = experiments.bench(device="cpu", **SMALL)
    torch.optim.SGD(other.model.parameters(), lr=0.1).step()  # another bench's parameters
    first, again, function, outside = bench.steps
    assert (first.update, first.lr, first.betas, first.active) == ("Adam", 1e-3, (0.5, 0.0), True)
    assert again.optimizer == first.optimizer and function.update == "<lambda>"
    assert outside.update == "SGD" and outside.optimizer != first.optimizer
    assert not outside.active and len(other.steps) == 1


def test_a_bench_is_active_only_inside_its_own_with_block():
    bench, other = experiments.bench(**SMALL), experiments.bench(**SMALL)
    assert not bench.active
    with bench:
        assert bench.active and not other.active
        with other:
            assert other.active and not bench.active
        assert bench.active
    assert not bench.active


def test_initial_keeps_the_values_the_bench_was_built_with():
    bench = experiments.bench(device="cpu", **SMALL)
    built = bench.initial[ENCODER].clone()
    bench.backward()
    bench.step(experiments.sgd(lr=0.1))
    assert torch.equal(bench.initial[ENCODER], built)
    assert not torch.equal(bench.snapshot()[ENCODER], built)


def test_the_log_keeps_every_setting_of_each_group_with_a_bench_parameter():
    bench = experiments.bench(device="cpu", **SMALL)
    bench.backward()
    encoder = bench.parameter(ENCODER)
    others = [p for p in bench.model.parameters() if p is not encoder]
    groups = [{"params": [encoder], "eps": 1e-3}, {"params": others, "amsgrad": True}]
    bench.step(lambda params: torch.optim.Adam(groups, lr=1e-3))
    (record,) = bench.steps
    first, second = (dict(settings) for settings in record.settings)
    assert (first["eps"], first["amsgrad"], second["eps"], second["amsgrad"]) == (
        1e-3,
        False,
        1e-8,
        True,
    )
    assert record.lr == 1e-3 and record.betas == (0.9, 0.999)
    assert experiments.update_settings(partial(lambda params, lr: None, lr=0.1)) is None


def test_a_made_up_profile_is_kept_as_itself():
    made_up = emps.TORCH_2_2_1.with_broken({"addcmul"})
    bench = experiments.bench(made_up, **SMALL)
    assert bench.profile is made_up
    with bench:
        assert emps.current_profile() is made_up
    assert experiments.bench("macos15", **SMALL).profile == "macos15"


def test_the_log_keeps_each_parameter_as_it_was_at_the_step():
    bench = experiments.bench(**SMALL)
    bench.backward()
    bench.step(experiments.adam())
    bench.model.to("cpu")
    (record,) = bench.steps
    assert record.setup[0] == (ENCODER, "emps", torch.float32, False)
    assert all(device == "emps" for _, device, _, _ in record.setup)
