"""Random layouts for notebook 04's checkers: every kind drawn, torch's answers, smallest first."""

from __future__ import annotations

import torch

from course.layout import oracle
from course.layout.calculator import Layout
from course.layout.oracle import as_ints, first_mismatch, mismatches, random_layouts, size_key


def test_layouts_are_real_tensors_whose_values_are_addresses():
    layout = Layout.strided((2, 3), (1, 4), 5)
    assert (layout.storage_size, str(layout)) == (15, "shape (2, 3), stride (1, 4), offset 5")
    tensor = layout.tensor()
    assert (tuple(tensor.shape), tensor.stride(), tensor.storage_offset()) == ((2, 3), (1, 4), 5)
    assert tensor[1, 2].item() == 5 + 1 * 1 + 2 * 4
    assert Layout.of(tensor) == layout
    assert Layout.strided((0, 3), (7, 1), 2).tensor().numel() == 0


def test_random_layouts_cover_every_kind_and_are_deterministic():
    layouts = random_layouts(count=300, seed=0)
    assert layouts == random_layouts(count=300, seed=0) and len(set(layouts)) == 300
    assert any(0 in v.shape for v in layouts) and any(0 in v.stride for v in layouts)
    assert any(v.offset for v in layouts)
    assert any(not v.tensor().is_contiguous() for v in layouts)
    assert [size_key(v) for v in layouts] == sorted(size_key(v) for v in layouts)


def test_case_lists_reach_scalars_and_five_dims():
    dims = {len(c.layout.shape) for c in oracle.address_cases()}
    assert dims == {0, 1, 2, 3, 4, 5}
    assert {len(c.layout.shape) for c in oracle.contiguity_cases()} == dims
    assert max(len(c.layout.shape) for c in oracle.permute_cases()) == 5
    assert oracle.address_cases() is oracle.address_cases()  # built once


def test_address_cases_pass_32_bits_with_few_dims_and_torchs_own_answers():
    far = [c for c in oracle.address_cases() if c.expected >= 2**32]
    assert far and min(len(c.layout.shape) for c in far) == 0  # not read as "named dims"
    assert any(max(c.layout.stride, default=0) >= 2**31 for c in far)  # a stride, not only offset
    for case in far:  # torch's own answer, on the meta device (no memory), is plain arithmetic
        index, stride, offset = case.args
        assert case.expected == offset + sum(i * s for i, s in zip(index, stride, strict=True))


def test_step_slices_vary_start_stop_and_step_on_long_dims():
    cases = oracle.step_slice_cases()
    assert sum(c.layout.shape[c.args[3]] >= 5 for c in cases) >= len(cases) // 3
    assert max(c.expected[0][c.args[3]] for c in cases) >= 4
    assert {c.args[6] for c in cases} == {1, 2, 3, 4}
    assert any(c.args[4] and c.layout.offset for c in cases)


def test_random_layouts_leave_the_global_rng_alone():
    torch.manual_seed(3)
    expected = torch.rand(2)
    torch.manual_seed(3)
    oracle.address_cases()
    assert torch.equal(torch.rand(2), expected)


def test_cases_hold_torch_answers():
    for case in oracle.transpose_cases()[:20]:
        shape, stride, offset = case.args
        assert case.expected == (shape[::-1], stride[::-1], offset)
    assert {c.expected for c in oracle.contiguity_cases()} == {True, False}


def test_first_mismatch_is_the_smallest_and_reports_exceptions():
    cases = oracle.contiguity_cases()
    miss = first_mismatch(cases, lambda shape, stride: True)
    assert miss is not None and not miss.case.expected
    smaller = [
        c for c in cases if not c.expected and size_key(c.layout) < size_key(miss.case.layout)
    ]
    assert smaller == []
    crash = first_mismatch(cases, lambda shape, stride: shape[5])
    assert "raised IndexError" in str(crash.yours) and "yours" in str(crash)
    assert (
        first_mismatch(cases, lambda s, st: Layout.strided(s, st).tensor().is_contiguous()) is None
    )


def test_mismatches_are_all_of_them_smallest_first():
    cases = oracle.contiguity_cases()
    found = mismatches(cases, lambda shape, stride: True)
    assert found[0] == first_mismatch(cases, lambda shape, stride: True)
    assert len(found) == sum(not c.expected for c in cases)
    assert [size_key(m.case.layout) for m in found] == sorted(
        size_key(m.case.layout) for m in found
    )
    crash = mismatches(cases, lambda shape, stride: shape[0] > 0)
    assert crash[0].raised and not crash[-1].raised


def test_as_ints_normalises_what_a_learner_returns():
    assert as_ints([[2, 3], torch.Size([3, 1]), 0]) == ((2, 3), (3, 1), 0)
    assert as_ints(True) is True and as_ints(None) is None
    assert isinstance(as_ints(torch.tensor(3)), torch.Tensor)  # stays a tensor: compare fails


def test_only_the_scaffold_counts_as_not_attempted():
    import pytest

    cases = oracle.contiguity_cases()

    def scaffold(shape, stride):
        raise NotImplementedError("your code here")

    with pytest.raises(NotImplementedError):
        first_mismatch(cases, scaffold)

    def other(shape, stride):
        raise NotImplementedError("meta tensors have no data")

    assert "raised NotImplementedError" in str(first_mismatch(cases, other).yours)
