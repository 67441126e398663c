"""What the emulated kernels did: one event per kernel call, for tables, plots and tests.

Widgets and lessons render this record instead of re-running logic (the GPU-Puzzles idea): the
device writes down which op ran, on which layout, how many temporaries its Placeholders made, and
whether the result reached the output.

Recorders belong to the process, not to a thread: see Note [One thread at a time] in
`course.emps.threads` (a backward pass's kernels run on PyTorch's own thread and are recorded).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

from course.emps.threads import check_thread, owning


@dataclass
class KernelEvent:
    """One emulated kernel call."""

    op: str  # full aten name, e.g. "aten::addcmul_"
    family: str  # structured kernel family, e.g. "addcmul"
    kernel: str  # which kernel implementation ran
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    contiguous: bool
    temporaries: int  # contiguous copies made by Placeholders and by the kernel itself
    lost_write: bool  # the result never reached the output tensor
    seconds: float

    def as_row(self) -> dict[str, object]:
        """A flat dict for tables."""
        return asdict(self)


@dataclass
class Recorder:
    """Collects KernelEvents while active (see `record()`)."""

    events: list[KernelEvent] = field(default_factory=list)

    def lost(self) -> list[KernelEvent]:
        """The events whose result was lost."""
        return [e for e in self.events if e.lost_write]

    def ops(self) -> list[str]:
        """The op names in call order."""
        return [e.op for e in self.events]


_ACTIVE: list[Recorder] = []
_STATE: dict = {"owner": None}  # the thread whose record() blocks are open


@contextlib.contextmanager
def record() -> Iterator[Recorder]:
    """Record every emulated kernel call made inside the block (by this thread, or by PyTorch's
    autograd thread working for it)."""
    recorder = Recorder()
    with owning(_STATE, "record emulated kernels"):
        _ACTIVE.append(recorder)
        try:
            yield recorder
        finally:
            _ACTIVE.remove(recorder)


def emit(event: KernelEvent) -> None:
    """Hand an event to every active recorder."""
    for recorder in _ACTIVE:
        recorder.events.append(event)


def recording() -> bool:
    """Whether any recorder is listening (events cost a little, so kernels skip them otherwise)."""
    if not _ACTIVE:
        return False
    if _STATE["owner"] != threading.get_ident():
        check_thread(_STATE["owner"], "run emulated kernels")
    return True
