"""Which devices this machine offers: a real Apple-MPS GPU, CUDA, or only the CPU.

A shared piece at the top of the package so that any lesson (the plateau runs, the auditor, the
doctor) can probe for hardware without importing another lesson's experiment.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


def mps_available() -> bool:
    """Whether this machine has a real Apple-MPS device to repeat the experiment on."""
    return bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()


def local_device() -> str:
    """The learner's own accelerator if there is one ("cuda", "mps"), else "cpu"."""
    if torch.cuda.is_available():
        return "cuda"
    return "mps" if mps_available() else "cpu"


@contextmanager
def pinned_threads(threads: int) -> Iterator[None]:
    """torch's intra-op thread count fixed at `threads` inside, restored afterwards (also after an
    error): a timing on one core is not swamped by thread scheduling on a busy or small machine,
    and a reference run gives the same bits every time."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
