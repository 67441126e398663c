"""The emulator's layout copies: the same bits as ATen's copies, made faster where they can be."""

from __future__ import annotations

import ctypes

import pytest
import torch

from course.emps import copies

MKL = copies._find_omatcopy()  # an x86 torch wheel exports MKL's omatcopy
SPECIALS = [0x7F800001, -(2**31), 1, 0x7FC00000, 0x7F800000]  # sNaN, -0.0, denormal, NaN, inf


def _bits(rows: int, cols: int, seed: int = 0) -> torch.Tensor:
    """A transposed float32 (rows, cols) tensor of random bit patterns, specials included."""
    generator = torch.Generator().manual_seed(seed)
    bits = torch.randint(-(2**31), 2**31 - 1, (cols, rows), dtype=torch.int32, generator=generator)
    bits.view(-1)[: len(SPECIALS)] = torch.tensor(SPECIALS, dtype=torch.int32)
    return bits.view(torch.float32).t()


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.equal(a.view(torch.int32), b.view(torch.int32))


@pytest.fixture(params=["aten", "mkl"])
def routine(request, monkeypatch):
    """Each path the copies can take, whichever this machine chose: ATen's copy_, MKL's."""
    if request.param == "mkl" and MKL is None:
        pytest.skip("this torch build does not export MKL's omatcopy")
    monkeypatch.setitem(copies._OMATCOPY, "float32", MKL if request.param == "mkl" else None)
    return request.param


@pytest.mark.skipif(MKL is None, reason="this torch build does not export MKL's omatcopy")
def test_mkl_moves_bits_and_is_used_only_where_it_is_faster():
    assert copies._mkl_moves_bits(MKL)
    chosen = copies._omatcopy()
    assert chosen is None or chosen is MKL


class Clock:
    """A made-up CPU clock: each reading advances 2; the fake MKL routine takes `mkl` back."""

    def __init__(self, mkl: float):
        self.now, self.mkl = 0.0, mkl

    def __call__(self) -> float:
        self.now += 2
        return self.now

    def routine(self, *args) -> None:
        self.now -= self.mkl


@pytest.mark.parametrize("mkl, faster", [(1.0, True), (0.0, False), (-3.0, False)])
def test_mkl_is_chosen_only_when_its_copy_takes_less_time(mkl, faster):
    clock = Clock(mkl)  # ATen's copy_ takes 2 on this clock, MKL's 2 - mkl
    assert copies._mkl_is_faster(clock.routine, clock) is faster


@pytest.mark.parametrize("shape", [(1536, 384), (37, 29), (2, 3), (3, 1000)])
def test_gather_is_contiguous_and_bitwise_what_contiguous_gives(shape, routine):
    source = _bits(*shape)
    gathered = copies.gather(source)
    assert gathered.is_contiguous() and gathered.data_ptr() != source.data_ptr()
    assert _same_bits(gathered, source.contiguous())


@pytest.mark.parametrize("shape", [(1536, 384), (37, 29), (3, 2)])
def test_copy_back_writes_every_bit_and_counts_as_a_write(shape, routine):
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
