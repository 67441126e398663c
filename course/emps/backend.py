"""Which kernel runs for which op: a profile's bugs, a learner's overrides, or the redesign.

The active backend is process state, changed only through `use_backend` / `use_profile`
(context managers that restore the previous backend even when the block raises).

The active backend belongs to the process, not to a thread: see Note [One thread at a time]
in `course.emps.threads`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from course.emps import mps_kernels
from course.emps.mps_kernels import Kernel
from course.emps.profiles import DEFAULT_PROFILE, Profile, get_profile
from course.emps.threads import check_thread, owning
from course.errors import CourseError, require_choice

DESIGNS = ("placeholder", "output-placeholder")


@dataclass(frozen=True)
class Backend:
    """A profile plus optional per-family kernel overrides and a kernel design."""

    profile: Profile
    overrides: Mapping[str, Kernel] = field(default_factory=dict)
    design: str = "placeholder"

    def __post_init__(self) -> None:
        if not isinstance(self.profile, Profile):
            raise CourseError(
                f"Backend needs a Profile, not {self.profile!r}; for a profile by name use "
                f"Backend(get_profile({self.profile!r})) or use_profile({self.profile!r})"
            )
        require_choice("design", self.design, DESIGNS)
        if not isinstance(self.overrides, Mapping):
            raise CourseError(
                f"overrides={self.overrides!r} is not allowed: give a dict from kernel family "
                "to kernel, e.g. {'addcmul': emps.gather_compute_scatter}"
            )
        for family, kernel in self.overrides.items():
            if not isinstance(family, str) or not family:
                raise CourseError(
                    f"overrides key {family!r} is not a kernel family: use the op's name "
                    "without '_' or '.out', e.g. 'addcmul' (for addcmul_ and addcmul.out)"
                )
            if not callable(kernel):
                raise CourseError(
                    f"overrides[{family!r}]={kernel!r} is not a kernel: give a function that "
                    "takes a KernelCall, e.g. emps.gather_compute_scatter (or leave "
                    f"{family!r} out to keep the profile's kernel)"
                )

    def kernel_for(self, family: str) -> Kernel:
        """The kernel this backend runs for a structured kernel family."""
        if family in self.overrides:
            return self.overrides[family]
        if self.design == "output-placeholder":
            return mps_kernels.output_placeholder
        if family in self.profile.broken:
            return mps_kernels.write_through_placeholder
        return mps_kernels.gather_compute_scatter


_STATE = {"backend": Backend(get_profile(DEFAULT_PROFILE)), "owner": None}


def current_backend() -> Backend:
    """The backend emulated kernels use right now (see Note [One thread at a time])."""
    owner = _STATE["owner"]
    if owner is not None and owner != threading.get_ident():
        check_thread(owner, "run emulated kernels")
    return _STATE["backend"]


def current_profile() -> Profile:
    """The profile of the active backend."""
    return current_backend().profile


@contextlib.contextmanager
def use_backend(backend: Backend) -> Iterator[Backend]:
    """Run a block on `backend`, restoring the previous one afterwards, also on error."""
    if not isinstance(backend, Backend):
        hint = f"use_profile({backend!r})" if isinstance(backend, (str, Profile)) else "Backend"
        raise CourseError(
            f"use_backend needs a Backend (e.g. emps.redesigned_backend()), not {backend!r}; "
            f"for a profile use {hint}"
        )
    with owning(_STATE, "change the emulated profile"):
        previous = _STATE["backend"]
        _STATE["backend"] = backend
        try:
            yield backend
        finally:
            _STATE["backend"] = previous


@contextlib.contextmanager
def use_profile(profile: str | Profile) -> Iterator[Backend]:
    """Run a block on one of the version profiles (see `course.emps.PROFILES`)."""
    with use_backend(Backend(get_profile(profile))) as backend:
        yield backend
