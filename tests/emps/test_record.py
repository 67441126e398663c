"""The recorder: one event per emulated kernel call, lost writes marked, and only while active."""

from __future__ import annotations

import threading

from course import emps
from course.errors import CourseError
from tests.emps.outputs import ones, transposed


def test_recorder_restored_and_sees_lost_writes():
    with emps.record() as log:
        transposed().addcmul_(ones(), ones())
        transposed().mul_(2)
    assert [e.op for e in log.lost()] == ["aten::addcmul_"]
    mul = [e for e in log.events if e.op == "aten::mul_"][0]
    assert mul.temporaries >= 1 and not mul.lost_write
    count = len(log.events)
    transposed().addcmul_(ones(), ones())
    assert len(log.events) == count, "a finished recorder must not keep recording"


def test_macos15_makes_no_temporaries():
    with emps.use_profile("macos15"), emps.record() as log:
        transposed().mul_(2)
    assert all(e.temporaries == 0 for e in log.events)


def test_a_recorder_never_collects_another_threads_kernels():
    """Note [One thread at a time]: a kernel from another thread of the learner's is refused
    while a recorder is open, instead of landing in this thread's record."""
    outcome: list[BaseException] = []

    def other_thread() -> None:
        try:
            transposed().mul_(2)
        except CourseError as exc:
            outcome.append(exc)

    with emps.record() as log:
        worker = threading.Thread(target=other_thread, name="other")
        worker.start()
        worker.join()
    assert log.events == [] and "'other' tried to run emulated kernels" in str(outcome[0])
