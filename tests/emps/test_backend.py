"""Which kernel runs on each profile: the broken ones drop writes, the others never do."""

from __future__ import annotations

import threading

import pytest
import torch

from course import emps
from course.errors import CourseError
from tests.emps.outputs import POISON, ones, transposed

OPS = {
    "mul_": lambda out: out.mul_(2.0),
    "lerp_": lambda out: out.lerp_(ones(), 0.5),
    "add_": lambda out: out.add_(ones()),
    "addcmul_": lambda out: out.addcmul_(ones(), ones(), value=0.5),
    "addcdiv_": lambda out: out.addcdiv_(ones(), ones() * 2, value=0.5),
    "normal_": lambda out: out.normal_(),
    "uniform_": lambda out: out.uniform_(),
    "exponential_": lambda out: out.exponential_(),
    "random_": lambda out: out.random_(1, 5),
    "bernoulli_": lambda out: out.bernoulli_(0.5),
}


BROKEN = {
    "2.2.1-macos14": {
        "addcmul_",
        "addcdiv_",
        "normal_",
        "uniform_",
        "exponential_",
        "random_",
        "bernoulli_",
    },
    "2.4-macos14": {"normal_", "uniform_", "exponential_", "random_", "bernoulli_"},
    "fixed-macos14": set(),
    "macos15": set(),
}


@pytest.mark.parametrize("profile", list(BROKEN))
@pytest.mark.parametrize("op", list(OPS))
def test_which_ops_drop_writes(profile, op):
    with emps.use_profile(profile):
        out = transposed()
        OPS[op](out)
        unchanged = bool((out.cpu() == POISON).all())
    assert unchanged == (op in BROKEN[profile])


@pytest.mark.parametrize("op", list(OPS))
def test_contiguous_outputs_always_written(op):
    out = torch.full((8, 8), POISON, device=emps.DEVICE)
    OPS[op](out)
    assert not bool((out.cpu() == POISON).any())


def test_only_the_output_layout_matters():
    out = torch.zeros(8, 8, device=emps.DEVICE)
    out.addcmul_(ones().t(), ones()[:, :].t(), value=1.0)
    assert bool((out.cpu() == 1).all())


def test_profile_restored_after_exception():
    before = emps.current_backend()
    with pytest.raises(ZeroDivisionError), emps.use_profile("macos15"):
        assert emps.current_profile().name == "macos15"
        raise ZeroDivisionError("inside the block")
    assert emps.current_backend() is before


def test_redesigned_backend_loses_nothing():
    with emps.use_backend(emps.redesigned_backend()), emps.record() as log:
        for op in OPS.values():
            out = transposed()
            op(out)
            assert not bool((out.cpu() == POISON).any())
    assert not log.lost()


def test_backends_are_built_from_profiles_and_used_as_backends():
    with pytest.raises(CourseError, match=r"Backend needs a Profile, not '2.2.1-macos14'"):
        emps.Backend("2.2.1-macos14")
    with pytest.raises(CourseError, match=r"not 'macos15'; for a profile use use_profile"):
        emps.use_backend("macos15").__enter__()
    with pytest.raises(CourseError, match="design"):
        emps.Backend(emps.MACOS15, design="magic")


def _in_thread(fn) -> list[BaseException]:
    """Run fn in a thread of our own; the exceptions it raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # reported to the test, which asserts on it
            raised.append(exc)

    worker = threading.Thread(target=run, name="learner-thread")
    worker.start()
    worker.join()
    return raised


def test_another_thread_is_refused_while_a_profile_block_is_open():
    """Note [One thread at a time]: the profile belongs to the process, so a second thread
    gets a clear error instead of silently running on the first one's profile."""
    with emps.use_profile("macos15"):
        (entering,) = _in_thread(lambda: emps.use_profile("2.4-macos14").__enter__())
        (running,) = _in_thread(lambda: transposed().mul_(2))
    for raised in (entering, running):
        assert isinstance(raised, CourseError) and "'learner-thread'" in str(raised)
        assert "one thread at a time" in str(raised)
    assert _in_thread(lambda: transposed().mul_(2)) == []  # no block open: any thread


def test_a_backward_pass_runs_on_the_profile_of_its_block():
    """PyTorch runs a device's backward kernels on its own autograd thread: they still use
    the block's profile and are recorded by its recorder."""
    weight = torch.nn.Parameter(torch.randn(4, 3).t().contiguous().t().to(emps.DEVICE))
    x = torch.randn(5, 4, device=emps.DEVICE)
    threaded = torch.autograd.set_multithreading_enabled(True)  # the course turns it off
    with threaded, emps.use_profile("2.2.1-macos14"), emps.record() as log:
        for _ in range(2):  # the second backward accumulates into .grad with add_
            (x @ weight).pow(2).sum().backward()
    assert "aten::add_" in log.ops()


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"addcmul": None}, r"overrides\['addcmul'\]=None is not a kernel"),
        ({"addcmul": "gather_compute_scatter"}, "is not a kernel: give a function"),
        ({3: emps.gather_compute_scatter}, "key 3 is not a kernel family"),
        ([("addcmul", emps.gather_compute_scatter)], "give a dict from kernel family"),
    ],
)
def test_bad_overrides_are_refused_when_the_backend_is_made(overrides, match):
    """Issue 37: overrides={"addcmul": None} was accepted and failed later with a TypeError."""
    with pytest.raises(CourseError, match=match):
        emps.Backend(emps.FIXED_MACOS14, overrides=overrides)
