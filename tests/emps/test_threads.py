"""One thread at a time may use the emulated device's process-wide state."""

from __future__ import annotations

import threading

import pytest
import torch

from course.emps.threads import check_thread, enter_calling_thread_backward, owning
from course.errors import CourseError


def _in_other_thread(work) -> BaseException | None:
    """Run `work` in a named learner thread; what it raised, if anything."""
    raised: list[BaseException] = []

    def body():
        try:
            work()
        except BaseException as exc:  # handed back to the test thread
            raised.append(exc)

    thread = threading.Thread(target=body, name="learner-thread")
    thread.start()
    thread.join(timeout=30)
    return raised[0] if raised else None


def test_no_owner_or_the_owner_itself_may_go_on():
    check_thread(None, "run a kernel")
    check_thread(threading.get_ident(), "run a kernel")


def test_another_learner_thread_is_refused_with_its_name_and_what_it_tried():
    owner = threading.get_ident()
    error = _in_other_thread(lambda: check_thread(owner, "run a kernel"))
    assert isinstance(error, CourseError)
    assert "thread 'learner-thread' tried to run a kernel" in str(error)


def test_owning_marks_this_thread_keeps_it_when_nested_and_restores_the_outer_owner():
    state = {"owner": None}
    with owning(state, "use a profile"):
        assert state["owner"] == threading.get_ident()
        with owning(state, "record"):
            assert state["owner"] == threading.get_ident()
        assert state["owner"] == threading.get_ident()
        error = _in_other_thread(lambda: owning(state, "use a backend").__enter__())
        assert isinstance(error, CourseError) and "use a backend" in str(error)
        assert state["owner"] == threading.get_ident()
    assert state["owner"] is None


def test_the_owner_is_released_even_when_the_block_raises():
    state = {"owner": None}
    with pytest.raises(ValueError), owning(state, "record"):
        raise ValueError("inside the block")
    assert state["owner"] is None
    assert _in_other_thread(lambda: check_thread(state["owner"], "record")) is None


def test_backward_passes_run_on_the_thread_that_imported_the_course():
    """Note [Backward on the calling thread]: no autograd device thread to abort at exit.
    (benchmarks/exit_aborts.py runs the script that showed the abort, in fresh processes.)"""
    import course.emps  # noqa: F401  (registers the device on import)

    assert not torch._C._is_multithreading_enabled()
    seen: list[bool] = []
    thread = threading.Thread(target=lambda: seen.append(torch._C._is_multithreading_enabled()))
    thread.start()
    thread.join(timeout=30)
    assert seen == [True]  # a per-thread setting: other threads keep PyTorch's default
    with torch.autograd.set_multithreading_enabled(True):
        enter_calling_thread_backward()
        assert not torch._C._is_multithreading_enabled()
