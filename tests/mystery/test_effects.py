"""What a planted kernel writes: each effect on a concrete output, next to the right result."""

from __future__ import annotations

import torch

from course import emps
from course.layout.named import laid_out
from course.mystery.bugs import PlantedBug, planted_backend
from course.mystery.conditions import Trigger

DEVICE = emps.DEVICE
VALUES = torch.arange(1.0, 13.0).reshape(3, 4)


def _struck(bug, layout, values, op):
    out = laid_out(values, layout, DEVICE)
    with emps.use_backend(planted_backend(bug)):
        op(out)
    return out.cpu()


def _halve(out):
    out.lerp_(torch.zeros(out.shape, dtype=out.dtype).to(DEVICE), 0.5)


def test_a_lost_write_leaves_the_output_as_it_was():
    bug = PlantedBug(("lerp",), Trigger("transposed"), "lost-write")
    assert torch.equal(_struck(bug, "transposed", VALUES, _halve), VALUES)


def test_a_scrambled_copy_back_writes_the_right_values_in_memory_order():
    result = _struck(
        PlantedBug(("lerp",), Trigger("transposed"), "scrambled"), "transposed", VALUES, _halve
    )
    assert not torch.equal(result, VALUES * 0.5)
    assert torch.equal(result.T.flatten(), (VALUES * 0.5).flatten())  # row-major into col-major


def test_half_written_updates_the_first_half_of_memory_only():
    values = VALUES.to(torch.bfloat16)
    bug = PlantedBug(("lerp",), Trigger("bfloat16"), "half-written")
    result = _struck(bug, "contiguous", values, _halve)
    assert torch.equal(result.flatten()[:6], (values * 0.5).flatten()[:6])
    assert torch.equal(result.flatten()[6:], values.flatten()[6:])


def test_offset_ignored_reads_the_values_at_the_start_of_the_storage():
    storage = torch.arange(20.0).to(DEVICE)
    view = storage[8:14]
    bug = PlantedBug(("mul",), Trigger("storage-offset"), "offset-ignored")
    with emps.use_backend(planted_backend(bug)):
        view.mul_(2.0)
    assert torch.equal(view.cpu(), torch.arange(6.0) * 2)
    assert torch.equal(storage[:8].cpu(), torch.arange(8.0))


def test_rows_past_the_bound_of_a_long_dimension_are_never_written():
    values = torch.arange(1.0, 21.0).reshape(10, 2)
    result = _struck(
        PlantedBug(("lerp",), Trigger("long-dim", 6), "rows-dropped"), "contiguous", values, _halve
    )
    assert torch.equal(result[:6], values[:6] * 0.5) and torch.equal(result[6:], values[6:])


def test_a_broadcast_operand_is_read_as_its_first_element():
    bug = PlantedBug(("add",), Trigger("broadcast-input"), "first-element")
    result = _struck(
        bug, "contiguous", VALUES, lambda out: out.add_(torch.tensor([1.0, 2, 3, 4]).to(DEVICE))
    )
    assert torch.equal(result, VALUES + 1)


def test_a_repeated_operand_reads_zeros():
    bug = PlantedBug(("addcmul",), Trigger("aliased-input"), "empty-slot")
    g = torch.full((3, 4), 3.0).to(DEVICE)
    result = _struck(bug, "contiguous", VALUES, lambda out: out.addcmul_(g, g, value=1.0))
    assert torch.equal(result, VALUES)  # VALUES + 3 * 0


def test_a_cache_hit_copies_the_previous_result():
    backend = planted_backend(PlantedBug(("mul",), Trigger("repeat-call"), "stale"))
    first, second = VALUES.to(DEVICE), (VALUES + 100).to(DEVICE)
    with emps.use_backend(backend):
        first.mul_(2.0)
        second.mul_(2.0)
    assert torch.equal(first.cpu(), VALUES * 2) and torch.equal(second.cpu(), VALUES * 2)


def test_a_negative_scalar_loses_its_sign():
    bug = PlantedBug(("clamp",), Trigger("negative-scalar"), "sign-dropped")
    values = torch.tensor([[-3.0, -0.5, 0.5, 3.0]])
    result = _struck(bug, "contiguous", values, lambda out: out.clamp_(-1.0, 2.0))
    assert torch.equal(result, torch.tensor([[1.0, 1.0, 1.0, 2.0]]))  # clamp(min=1, max=2)


def test_a_tiny_scalar_is_flushed_to_zero():
    bug = PlantedBug(("add",), Trigger("tiny-scalar"), "flushed")
    assert torch.equal(
        _struck(bug, "contiguous", torch.zeros(2, 2), lambda out: out.add_(1e-8)), torch.zeros(2, 2)
    )
