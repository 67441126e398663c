"""Planted bugs: each layout condition, each effect, and that the device does not give them away."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.errors import CourseError
from course.layout.named import LAYOUTS, laid_out
from course.mystery.bugs import (
    CONDITIONS,
    LAYOUT_CONDITIONS,
    PlantedBug,
    bug_free_backend,
    condition_holds,
    planted_backend,
)

EXAMPLES = {
    "transposed": lambda: laid_out(torch.randn(4, 3), "transposed"),
    "step-sliced": lambda: torch.randn(4, 6)[:, ::2],
    "storage-offset": lambda: laid_out(torch.randn(4, 3), "storage-offset"),
    "channels-last": lambda: laid_out(torch.randn(2, 3, 4, 5), "channels-last"),
    "permuted": lambda: laid_out(torch.randn(3, 4, 5), "permuted"),
    "bfloat16": lambda: torch.randn(4, 3, dtype=torch.bfloat16),
}


@pytest.mark.parametrize("condition", EXAMPLES)
def test_each_example_meets_its_condition_and_no_other_narrow_one(condition):
    tensor = EXAMPLES[condition]()
    met = {c for c in EXAMPLES if condition_holds(c, tensor)}
    assert met == {condition}
    assert condition_holds("any-non-contiguous", tensor) == (not tensor.is_contiguous())


def test_contiguous_float32_meets_no_condition():
    assert not any(condition_holds(c, torch.randn(3, 4)) for c in CONDITIONS)


def test_the_layout_conditions_are_the_courses_named_layouts():
    layouts = [c for c in LAYOUT_CONDITIONS if c in LAYOUTS]
    assert set(LAYOUT_CONDITIONS) - set(layouts) == {"bfloat16", "any-non-contiguous"}
    assert all(CONDITIONS[name][0] == LAYOUTS[name] for name in layouts)


def _run(bug, layout, values, op):
    out = laid_out(values, layout, emps.DEVICE)
    with emps.use_backend(planted_backend(bug)):
        op(out)
    return out.cpu()


def _lerp(out):
    out.lerp_(torch.zeros_like(out), 0.5)


VALUES = torch.arange(1.0, 13.0).reshape(3, 4)


def test_a_lost_write_leaves_the_output_unchanged_only_under_its_condition():
    bug = PlantedBug("lerp", "transposed", "lost-write")
    assert torch.equal(_run(bug, "transposed", VALUES, _lerp), VALUES)
    assert torch.equal(_run(bug, "contiguous", VALUES, _lerp), VALUES * 0.5)
    assert torch.equal(_run(bug, "transposed", VALUES, lambda o: o.mul_(0.5)), VALUES * 0.5)


def test_a_scrambled_copy_back_writes_the_right_values_in_the_wrong_places():
    result = _run(PlantedBug("lerp", "transposed", "scrambled"), "transposed", VALUES, _lerp)
    assert not torch.equal(result, VALUES * 0.5)
    assert torch.equal(result.flatten().sort().values, (VALUES * 0.5).flatten().sort().values)
    assert torch.equal(result.T.flatten(), (VALUES * 0.5).flatten())  # row-major into col-major


def test_half_written_updates_the_first_half_of_memory_only():
    values = VALUES.to(torch.bfloat16)
    result = _run(PlantedBug("lerp", "bfloat16", "half-written"), "contiguous", values, _lerp)
    assert torch.equal(result.flatten()[:6], (values * 0.5).flatten()[:6])
    assert torch.equal(result.flatten()[6:], values.flatten()[6:])


def test_offset_ignored_reads_the_values_at_the_start_of_the_storage():
    storage = torch.arange(20.0).to(emps.DEVICE)
    view = storage[8:14]
    with emps.use_backend(planted_backend(PlantedBug("mul", "storage-offset", "offset-ignored"))):
        view.mul_(2.0)
    assert torch.equal(view.cpu(), torch.arange(6.0) * 2)
    assert torch.equal(storage[:8].cpu(), torch.arange(8.0))


def test_impossible_bugs_are_refused():
    with pytest.raises(CourseError):
        PlantedBug("lerp", "step-sliced", "scrambled")
    with pytest.raises(CourseError):
        PlantedBug("lerp", "diagonal", "lost-write")


def test_the_device_does_not_name_the_planted_family():
    backend = planted_backend(PlantedBug("lerp", "transposed", "lost-write"))
    assert "lerp" not in repr(backend) and list(backend.overrides) == []
    out = laid_out(VALUES, "transposed", emps.DEVICE)
    with emps.use_backend(backend), emps.record() as log:
        _lerp(out)
        out.mul_(2.0)
    assert {e.kernel for e in log.events} == {"gather_compute_scatter"}
    assert not any(e.lost_write for e in log.events)


def test_the_bug_free_backend_runs_every_op_correctly():
    out = laid_out(VALUES, "transposed", emps.DEVICE)
    with emps.use_backend(bug_free_backend()):
        _lerp(out)
    assert torch.equal(out.cpu(), VALUES * 0.5)
