"""Which thread may use the emulated device's process-wide state (the backend, the recorders).

Note [One thread at a time]
    The active backend and the recorders belong to the process, not to a thread: PyTorch runs
    a backward pass's kernels for a non-CPU device on its own autograd thread, and those
    kernels must use the profile of the `use_profile` block that called `backward()` and be
    seen by its recorder. So while one thread is inside a `use_backend`/`use_profile`/`record`
    block, another thread of the learner's that enters one, or runs emulated kernels, gets a
    CourseError saying so, instead of silently running on the other thread's profile or being
    recorded by it. Threads that PyTorch itself starts (the autograd engine's) work for the
    block's thread and run as usual.

Note [Backward on the calling thread]
    For a device other than the CPU, autograd runs backward passes on a thread of its own,
    started at the first backward pass and never stopped. On the emulated device that thread
    still holds the graph's last Python tensors when it hands the result back, and dropping
    them needs the GIL; when that backward pass was the program's last statement, the
    interpreter may be shutting down by then, Python ends the thread (pthread_exit), and the
    unwinding through PyTorch's C++ ends in std::terminate: "terminate called without an
    active exception", exit status 134, in about one run in ten of such a script (the
    mechanism of pytorch#38228). So `enter_calling_thread_backward()` turns autograd's
    multithreading off for the thread that imports the course (a per-thread setting): its
    backward passes run on it, as a CPU backward does, with the same numbers, and the device
    thread never starts. A backward pass from another thread still uses autograd's thread.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import torch

from course.errors import CourseError

_ENTERING = threading.Lock()


def enter_calling_thread_backward() -> None:
    """Run this thread's backward passes on it (Note [Backward on the calling thread])."""
    torch.autograd.set_multithreading_enabled(False)  # takes effect when made, per thread


def check_thread(owner: int | None, doing: str) -> None:
    """Refuse a thread of the learner's other than `owner` (PyTorch's own threads may help)."""
    this = threading.current_thread()
    if owner is None or owner == this.ident or isinstance(this, threading._DummyThread):
        return
    raise CourseError(
        f"thread {this.name!r} tried to {doing} while another thread is inside a "
        "course.emps use_profile/use_backend/record block: the emulated device's profile "
        "and recorder belong to the whole process (a backward pass runs on PyTorch's own "
        "thread), so one thread at a time may use them. Run emulated work in one thread, "
        "or one process per profile"
    )


@contextlib.contextmanager
def owning(state: dict, doing: str) -> Iterator[None]:
    """Mark this thread as the owner of `state` for the block (nested blocks keep it)."""
    me = threading.get_ident()
    with _ENTERING:
        check_thread(state["owner"], doing)
        outer, state["owner"] = state["owner"], me
    try:
        yield
    finally:
        state["owner"] = outer
