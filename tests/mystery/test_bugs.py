"""Planted bugs on the device: each strikes exactly when its condition holds, and hides like a
real bug."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.errors import CourseError
from course.layout.named import laid_out
from course.mystery.bugs import (
    CASE_PROFILE,
    PlantedBug,
    bug_free_backend,
    planted_backend,
    times_fired,
)
from course.mystery.conditions import Trigger
from course.mystery.effects import ALLOWED
from tests.mystery.runs import PLANTED_KINDS

DEVICE = emps.DEVICE


def _lerp(out, end):
    out.lerp_(end, 0.5)


def _on(layout, shape=(3, 8), dtype=torch.float32):
    def make():
        out = laid_out(torch.randn(shape).to(dtype) + 2, layout, DEVICE)
        _lerp(out, torch.zeros(shape, dtype=dtype).to(DEVICE))
        return out

    return make


def _add(other_shape, shape=(3, 8)):
    def make():
        out = (torch.randn(shape) + 2).to(DEVICE)
        out.add_(torch.randn(other_shape).to(DEVICE))
        return out

    return make


def _addcmul(same):
    def make():
        out, g = (torch.randn(3, 8) + 2).to(DEVICE), torch.randn(3, 8).to(DEVICE)
        out.addcmul_(g, g if same else g.clone(), value=0.5)
        return out

    return make


def _twice():
    out = (torch.randn(3, 8) + 2).to(DEVICE)
    _lerp(out, torch.zeros(3, 8).to(DEVICE))
    _lerp(out, torch.zeros(3, 8).to(DEVICE))
    return out


def _clamp(low):
    def make():
        out = torch.randn(3, 8).to(DEVICE)
        return out.clamp_(low, 1.0)

    return make


def _add_scalar(value):
    def make():
        return torch.zeros(3, 8).to(DEVICE).add_(value)

    return make


def _foreach(count):
    def make():
        outs = [(torch.randn(2, 4) + 2).to(DEVICE) for _ in range(count)]
        torch._foreach_lerp_(outs, [torch.zeros(2, 4).to(DEVICE) for _ in outs], 0.5)
        return outs[-1]

    return make


# kind -> (family, trigger bound, a call that meets it, a call that does not, fires on the first)
EXAMPLES = {
    "transposed": ("lerp", 0, _on("transposed"), _on("contiguous"), 1),
    "step-sliced": ("lerp", 0, _on("step-sliced"), _on("transposed"), 1),
    "storage-offset": ("lerp", 0, _on("storage-offset"), _on("contiguous"), 1),
    "channels-last": ("lerp", 0, _on("channels-last", (2, 3, 4, 5)), _on("permuted", (3, 4, 5)), 1),
    "permuted": ("lerp", 0, _on("permuted", (3, 4, 5)), _on("channels-last", (2, 3, 4, 5)), 1),
    "bfloat16": ("lerp", 0, _on("contiguous", dtype=torch.bfloat16), _on("contiguous"), 1),
    "large": ("lerp", 100, _on("contiguous", (11, 10)), _on("contiguous", (10, 10)), 1),
    "long-dim": ("lerp", 8, _on("contiguous", (9, 2)), _on("contiguous", (8, 8)), 1),
    "unaligned": ("lerp", 0, _on("contiguous", (3, 6)), _on("contiguous", (3, 8)), 1),
    "broadcast-input": ("add", 0, _add((8,)), _add((3, 8)), 1),
    "aliased-input": ("addcmul", 0, _addcmul(True), _addcmul(False), 1),
    "repeat-call": ("lerp", 0, _twice, _on("contiguous"), 1),
    "negative-scalar": ("clamp", 0, _clamp(-1.0), _clamp(0.0), 1),
    "tiny-scalar": ("add", 0, _add_scalar(1e-8), _add_scalar(0.25), 1),
    "foreach": ("lerp", 1, _foreach(3), _on("contiguous"), 2),
}


def test_every_planted_condition_has_an_example():
    assert set(EXAMPLES) == set(PLANTED_KINDS)


@pytest.mark.parametrize("kind", EXAMPLES)
def test_a_bug_strikes_exactly_when_its_condition_holds(kind):
    family, bound, meets, misses, fires = EXAMPLES[kind]
    bug = PlantedBug((family,), Trigger(kind, bound), ALLOWED[kind][0])
    for make, expected in ((meets, fires), (misses, 0)):
        backend = planted_backend(bug)
        torch.manual_seed(0)
        with emps.use_backend(backend):
            result = make().cpu()
        torch.manual_seed(0)
        with emps.use_backend(bug_free_backend()):
            healthy = make().cpu()
        assert times_fired(backend) == expected, (kind, make)
        assert torch.equal(result, healthy) == (expected == 0), (kind, make)


def test_another_family_is_never_struck():
    backend = planted_backend(PlantedBug(("mul",), Trigger("transposed"), "lost-write"))
    with emps.use_backend(backend):
        _on("transposed")()
    assert times_fired(backend) == 0


def test_impossible_bugs_are_refused():
    with pytest.raises(CourseError, match="allows"):
        PlantedBug(("lerp",), Trigger("step-sliced"), "scrambled")
    with pytest.raises(CourseError, match="no planted condition"):
        Trigger("any-non-contiguous")
    with pytest.raises(CourseError, match="bound"):
        Trigger("large")
    with pytest.raises(CourseError, match="unknown effect"):
        PlantedBug(("lerp",), Trigger("transposed"), "melted")


def test_the_device_does_not_name_the_planted_family_or_lost_writes():
    backend = planted_backend(PlantedBug(("lerp",), Trigger("transposed"), "lost-write"))
    assert "lerp" not in repr(backend) and list(backend.overrides) == []
    assert backend.overrides != planted_backend().overrides  # never equal to another device
    with emps.use_backend(backend), emps.record() as log:
        _on("transposed")()
    assert {e.kernel for e in log.events} == {"gather_compute_scatter"}
    assert not any(e.lost_write for e in log.events)


def test_the_case_profile_names_no_version_and_no_lost_writes():
    assert "no lost writes" not in CASE_PROFILE.label and "unknown" in CASE_PROFILE.label
    assert CASE_PROFILE.name not in emps.PROFILES and not CASE_PROFILE.broken
