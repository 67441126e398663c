"""What the emulated kernels did: one event per kernel call, for tables, plots and tests.

Widgets and lessons render this record instead of re-running logic (the GPU-Puzzles idea): the
device writes down which op ran, on which layout, how many temporaries its Placeholders made, and
whether the result reached the output.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field


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


@contextlib.contextmanager
def record() -> Iterator[Recorder]:
    """Record every emulated kernel call made inside the block."""
    recorder = Recorder()
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
    return bool(_ACTIVE)
