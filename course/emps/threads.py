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
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from course.errors import CourseError

_ENTERING = threading.Lock()


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
