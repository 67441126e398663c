"""How a mystery bug is planted: kernel families that misbehave under one condition.

A planted bug is invented for practice. It is modelled on a pattern real kernels had (see
`conditions.PATTERNS` and the effects' docstrings), but put on an op and a condition where
PyTorch never had it, so a learner cannot look the answer up. Everything else runs as on a
recent, fixed stack (`emps.FIXED_MACOS14`): a call that does not meet the condition goes
through the working kernel, `gather_compute_scatter`.

Note [A planted bug hides like a real one]
    Every kernel family routes through one `PlantedKernel` object named like the working kernel,
    and `PlantedKernels` does not list which family it breaks, so neither
    `emps.current_backend()` nor the recorder's `kernel` column names the culprit. A planted
    kernel also does not report its buffers to the recorder: the recorder's `lost_write` column
    recognises only the story's Placeholder bug. The learner judges outputs by their values,
    as on a real device.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from course import emps
from course.emps.mps_kernels import KernelCall, gather_compute_scatter
from course.errors import CourseError
from course.mystery.conditions import Memory, Trigger
from course.mystery.effects import ALLOWED, EFFECTS, record_result

# The profile a case's device reports: a stack with none of the known bugs, and versions a
# learner cannot look up (the checklist prints its label).
CASE_PROFILE = replace(
    emps.FIXED_MACOS14,
    name="case-device",
    label="your case's device (versions unknown)",
    description="a stack without the known MPS bugs, and one bug of its own (your case)",
)


@dataclass(frozen=True)
class PlantedBug:
    """One invented bug: these kernel families (op names without "_") misbehave under a trigger."""

    families: tuple[str, ...]
    trigger: Trigger
    effect: str

    def __post_init__(self) -> None:
        if self.effect not in EFFECTS:
            raise CourseError(f"unknown effect {self.effect!r}; known: {', '.join(EFFECTS)}")
        if self.effect not in ALLOWED[self.trigger.kind]:
            allowed = ", ".join(ALLOWED[self.trigger.kind])
            raise CourseError(f"{self.trigger.kind!r} allows the effects {allowed}")
        if not self.families:
            raise CourseError("a planted bug needs at least one kernel family")

    @property
    def op(self) -> str:
        """The in-place op a learner would name for the first family, e.g. "lerp_"."""
        return f"{self.families[0]}_"


class PlantedKernel:
    """The kernel every family runs on a planted device: working, except for the planted bugs.

    It remembers what a real kernel with a cache or a list position would (`Memory`), and
    counts how often a bug struck (`memory.fired`): check_fix needs a run where it never does.
    """

    __name__ = gather_compute_scatter.__name__  # see Note [A planted bug hides like a real one]

    def __init__(self, bugs: tuple[PlantedBug, ...], harmless: bool = False) -> None:
        self._bugs = bugs
        self._harmless = harmless
        self.memory = Memory()
        self.watch = None  # check_fix's seal: called on every kernel call of a sealed run

    def __call__(self, call: KernelCall) -> None:
        if self.watch is not None:
            self.watch()
        for bug in self._bugs:
            if call.family in bug.families and bug.trigger.holds(call, self.memory):
                self.memory.fired += 1
                if not self._harmless:
                    EFFECTS[bug.effect](call, bug.trigger, self.memory)
                    return
        gather_compute_scatter(call)
        if any(bug.effect == "stale" and call.family in bug.families for bug in self._bugs):
            record_result(call, self.memory)

    def __repr__(self) -> str:
        return "<kernel>"


class PlantedKernels(Mapping):
    """Overrides that send every family to one PlantedKernel, without listing the broken ones."""

    def __init__(self, bugs: tuple[PlantedBug, ...], harmless: bool = False) -> None:
        self.kernel = PlantedKernel(bugs, harmless)

    def __contains__(self, family: object) -> bool:
        return isinstance(family, str)

    def __getitem__(self, family: str) -> PlantedKernel:
        return self.kernel

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return other is self  # two planted devices are never the same device

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "PlantedKernels(<hidden until the case is solved>)"


def bug_free_backend() -> emps.Backend:
    """The case's device with no bug at all: what a scenario should look like."""
    return emps.Backend(CASE_PROFILE)


def planted_backend(*bugs: PlantedBug) -> emps.Backend:
    """The case's device with planted bugs (a fresh one: its kernel remembers nothing yet)."""
    return emps.Backend(CASE_PROFILE, overrides=PlantedKernels(tuple(bugs)))


def harmless_backend(bug: PlantedBug) -> emps.Backend:
    """The case's device without the bug, where the bug's condition is still met and counted.

    Why: a repro that reads whether the bug struck (`times_fired`, the kernel's memory) instead
    of comparing a result says True here, as it does on the buggy device; a real one says
    False, as on any healthy device."""
    return emps.Backend(CASE_PROFILE, overrides=PlantedKernels((bug,), harmless=True))


def times_fired(backend: emps.Backend) -> int:
    """How often a planted backend's bugs have struck so far (0 for any other backend)."""
    overrides = backend.overrides
    return overrides.kernel.memory.fired if isinstance(overrides, PlantedKernels) else 0
