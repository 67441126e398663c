"""One thread at a time may use the emulated device's process-wide state."""

from __future__ import annotations

import threading

import pytest

from course.emps.threads import check_thread, owning
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
