"""How a mystery bug is planted: one kernel family that misbehaves under one layout condition.

A planted bug is invented for practice. It is modelled on patterns real MPS kernels had (a
result computed into a temporary and dropped, a copy-back in the wrong element order, a
kernel that sized its grid for the wrong dtype, a view's storage offset forgotten), but moved
to an op and a layout where PyTorch never had it, so a learner cannot look the answer up.

Everything else runs exactly as on the bug-free profile "fixed-macos14": an output that does not
meet the condition goes through the working kernel, `gather_compute_scatter`.

Note [A planted bug hides like a real one]
    Every kernel family routes through one `PlantedKernel` object named like the working kernel,
    and `PlantedKernels` does not list which family it breaks, so neither
    `emps.current_backend()` nor the recorder's `kernel` column names the culprit. A planted
    kernel also does not report its buffers to the recorder: the recorder's `lost_write` column
    recognises only the story's Placeholder bug. The learner judges outputs by their values,
    as on a real device.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial

import torch

from course import emps
from course.emps.mps_kernels import KernelCall, gather_compute_scatter
from course.errors import CourseError
from course.layout.named import LAYOUTS, has_layout, is_dense

BUG_FREE_PROFILE = "fixed-macos14"  # no historical bugs: the planted one is the only one


# The conditions a learner chooses from (check_culprit): the course's named layouts an output
# can have, plus a dtype. "any-non-contiguous" is the story's condition, offered as a choice
# because it is the obvious guess, and no mystery case uses it.
CONDITIONS: dict[str, tuple[str, Callable[[torch.Tensor], bool]]] = {
    **{
        name: (LAYOUTS[name], partial(has_layout, layout=name))
        for name in ("transposed", "step-sliced", "storage-offset", "channels-last", "permuted")
    },
    "bfloat16": (
        "an output of dtype bfloat16, whatever its layout",
        lambda t: t.dtype == torch.bfloat16,
    ),
    "any-non-contiguous": (
        "any output that is not contiguous",
        lambda t: not t.is_contiguous(),
    ),
}
LAYOUT_CONDITIONS = tuple(CONDITIONS)
DENSE_CONDITIONS = ("transposed", "channels-last", "permuted")  # no gaps in the output's memory


def condition_holds(condition: str, tensor: torch.Tensor) -> bool:
    """Whether a tensor meets a layout condition (one of LAYOUT_CONDITIONS)."""
    return CONDITIONS[condition][1](tensor)


# --- what a planted kernel does when its condition holds -----------------------------------


def _compute(call: KernelCall, self_from_storage_start: bool = False) -> torch.Tensor:
    """The op's correct result, in a contiguous temporary, without touching the output."""
    needs_copy = not call.output.is_contiguous()
    call.temporaries += int(needs_copy)
    result = call.output.contiguous() if needs_copy else call.output.clone()
    inputs = list(call.inputs)
    if self_from_storage_start:  # the kernel forgot the view's storage offset when reading
        shifted = torch.as_strided(call.output, call.output.shape, call.output.stride(), 0)
        inputs = [shifted if t is call.output else t for t in inputs]
    buffers = [call.placeholder(t).buffer for t in inputs]
    call.graph(result, buffers)
    return result


def _memory_order(output: torch.Tensor) -> torch.Tensor:
    """A flat view of a dense output's elements in the order they lie in memory."""
    return torch.as_strided(output, (output.numel(),), (1,), output.storage_offset())


def lost_write(call: KernelCall) -> None:
    """The result is computed into a temporary that never reaches the output (the story's bug)."""
    _compute(call)


def scrambled(call: KernelCall) -> None:
    """The contiguous result is copied into the output's memory in its own order (no strides)."""
    result = _compute(call)
    _memory_order(call.output).copy_(result.reshape(-1))


def half_written(call: KernelCall) -> None:
    """Only the first half of the output's memory is written (a grid sized for 4-byte elements)."""
    result = _compute(call)
    half = call.output.numel() // 2
    if not is_dense(call.output):  # no single memory order to cut: take the first half by index
        first = torch.arange(call.output.numel()).view(call.output.shape) < half
        call.output.copy_(torch.where(first, result, call.output))
        return
    laid_out = torch.empty_like(call.output)  # same strides: memory order matches the output's
    laid_out.copy_(result)
    _memory_order(call.output)[:half].copy_(_memory_order(laid_out)[:half])


def offset_ignored(call: KernelCall) -> None:
    """The op reads its own values from the start of the storage instead of from the view."""
    call.output.copy_(_compute(call, self_from_storage_start=True))


EFFECTS: dict[str, Callable[[KernelCall], None]] = {
    "lost-write": lost_write,
    "scrambled": scrambled,
    "half-written": half_written,
    "offset-ignored": offset_ignored,
}


@dataclass(frozen=True)
class PlantedBug:
    """One invented bug: kernel `family` (op name without "_") misbehaves under `condition`."""

    family: str
    condition: str
    effect: str

    def __post_init__(self) -> None:
        if self.condition not in CONDITIONS or self.effect not in EFFECTS:
            raise CourseError(f"unknown condition or effect in {self}")
        if self.effect == "scrambled" and self.condition not in DENSE_CONDITIONS:
            raise CourseError(f"a scrambled copy-back needs one of {DENSE_CONDITIONS}")

    @property
    def op(self) -> str:
        """The in-place op a learner would name, e.g. "lerp_"."""
        return f"{self.family}_"


class PlantedKernel:
    """The kernel every family runs on a mystery device: working, except for the planted bug."""

    __name__ = gather_compute_scatter.__name__  # see Note [A planted bug hides like a real one]

    def __init__(self, bug: PlantedBug) -> None:
        self._bug = bug

    def __call__(self, call: KernelCall) -> None:
        bug = self._bug
        if call.family == bug.family and condition_holds(bug.condition, call.output):
            EFFECTS[bug.effect](call)
        else:
            gather_compute_scatter(call)

    def __repr__(self) -> str:
        return "<kernel>"


class PlantedKernels(Mapping):
    """Overrides that send every family to one PlantedKernel, without listing the broken one."""

    def __init__(self, bug: PlantedBug) -> None:
        self._kernel = PlantedKernel(bug)

    def __contains__(self, family: object) -> bool:
        return isinstance(family, str)

    def __getitem__(self, family: str) -> PlantedKernel:
        return self._kernel

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "PlantedKernels(<one family, hidden until the case is solved>)"


def bug_free_backend() -> emps.Backend:
    """The emulated device with no bug at all: what a scenario should look like."""
    return emps.Backend(emps.get_profile(BUG_FREE_PROFILE))


def planted_backend(bug: PlantedBug) -> emps.Backend:
    """The bug-free device with one planted bug."""
    return emps.Backend(emps.get_profile(BUG_FREE_PROFILE), overrides=PlantedKernels(bug))
