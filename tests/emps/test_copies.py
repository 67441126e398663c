"""The emulator's layout copies: the same bits as ATen's copies, made faster where they can be."""

from __future__ import annotations

import ctypes

import pytest
import torch

from course.emps import copies

FAST = copies._omatcopy() is not None  # an x86 torch wheel exports MKL's omatcopy
SPECIALS = [0x7F800001, -(2**31), 1, 0x7FC00000, 0x7F800000]  # sNaN, -0.0, denormal, NaN, inf


def _bits(rows: int, cols: int, seed: int = 0) -> torch.Tensor:
    """A transposed float32 (rows, cols) tensor of random bit patterns, specials included."""
    generator = torch.Generator().manual_seed(seed)
    bits = torch.randint(-(2**31), 2**31 - 1, (cols, rows), dtype=torch.int32, generator=generator)
    bits.view(-1)[: len(SPECIALS)] = torch.tensor(SPECIALS, dtype=torch.int32)
    return bits.view(torch.float32).t()


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.equal(a.view(torch.int32), b.view(torch.int32))


@pytest.mark.skipif(not FAST, reason="this torch build does not export MKL's omatcopy")
def test_this_build_takes_the_fast_path():
    assert copies._mkl_moves_bits(copies._omatcopy())


@pytest.mark.parametrize("shape", [(1536, 384), (37, 29), (2, 3), (3, 1000)])
def test_gather_is_contiguous_and_bitwise_what_contiguous_gives(shape):
    source = _bits(*shape)
    gathered = copies.gather(source)
    assert gathered.is_contiguous() and gathered.data_ptr() != source.data_ptr()
    assert _same_bits(gathered, source.contiguous())


@pytest.mark.parametrize("shape", [(1536, 384), (37, 29), (3, 2)])
def test_copy_back_writes_every_bit_and_counts_as_a_write(shape):
    result = _bits(*shape, seed=1).contiguous()
    target = torch.zeros(shape[::-1]).t()
    version = target._version
    copies.copy_back(target, result)
    assert _same_bits(target.contiguous(), result) and target.stride() == (1, shape[0])
    assert target._version > version  # autograd sees the write, as after copy_


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.arange(24.0).view(4, 6)[:, ::2],  # step-sliced
        lambda: torch.arange(24, dtype=torch.int32).view(6, 4).t(),  # not float32
        lambda: torch.arange(24.0).view(6, 4).t()._neg_view(),  # a negated view
        lambda: torch.arange(24.0).view(2, 3, 4).permute(2, 1, 0),  # three dimensions
        lambda: torch.arange(24.0).view(4, 6).t()[:, 1:],  # a transposed slice
        lambda: torch.arange(6.0),  # already contiguous: the tensor itself
        lambda: torch.arange(24.0).view(6, 4).t().requires_grad_(),  # autograd must see the copy
    ],
)
def test_every_other_layout_gathers_and_copies_back_as_aten_does(make):
    source = make()
    gathered = copies.gather(source)
    assert torch.equal(gathered, source) and gathered.is_contiguous()
    assert (gathered is source) == source.is_contiguous()
    assert (gathered.grad_fn is not None) == (source.requires_grad and gathered is not source)
    target = torch.zeros_like(source).detach()
    copies.copy_back(target, gathered.detach())
    assert torch.equal(target, source)


def test_copy_back_into_memory_its_result_shares_takes_atens_path():
    """MKL's copy must not read memory it writes: ATen's copy_ refuses such a copy, and so
    does copy_back."""
    base = torch.arange(16.0).view(4, 4)
    assert not copies._separate_contiguous(base, base.t())
    with pytest.raises(RuntimeError, match="single memory location"):
        base.t().copy_(base)
    with pytest.raises(RuntimeError, match="single memory location"):
        copies.copy_back(base.t(), base)


def test_a_routine_that_does_not_move_bits_exactly_is_refused():
    def zeroes(order, trans, rows, cols, alpha, source, lda, target, ldb):
        ctypes.memset(target, 0, rows * cols * 4)

    assert not copies._mkl_moves_bits(zeroes)
