"""The emulator's layout copies: a Placeholder's gather and a kernel's copy back, made cheap.

The story's device copied every non-contiguous tensor a kernel touched into a contiguous
buffer (the gather) and, in the working kernels, copied the result back (the scatter). The
emulator makes the same copies, so a transposed run pays for them as the story's run did. What
it need not pay is ATen's slow way of making them: a transposed 2-D tensor goes through ATen's
blocked transpose (`copy_same_type_transpose_`, scalar swaps in 60x60 blocks), about 1.5 ms for
the story's [1536, 384] encoder weight on a cold cache here, and a transposed Adam step makes a
dozen such copies. MKL's `mkl_somatcopy`, exported by the x86 torch wheels, made the same copy
in about 40% less time on the machine this was first tuned on, but took 1.9-2.8x as long as
ATen's on a 2-core AMD EPYC (2026-12-07). So it is used only where it is faster: once per
process, `_mkl_is_faster` times both on the story's encoder shape. Nothing else changes: the
same copies, into the same fresh buffers, with the same bits (`_mkl_moves_bits` checks once,
with a signalling NaN, a negative zero and a denormal, that MKL moves floats rather than
multiplying them by its alpha of 1), whichever routine makes them. Every other layout, dtype or
torch build takes ATen's `copy_`.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable

import torch

# MKL_Somatcopy(ordering, trans, rows, cols, alpha, A, lda, B, ldb): B = alpha * A^T, row-major
_ARGTYPES = [ctypes.c_char, ctypes.c_char, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_float]
_ARGTYPES += [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
_OMATCOPY: dict[str, Callable[..., None] | None] = {}  # "float32": the routine, once looked up
_PROBE_SHAPE = (37, 29)  # odd sizes: no block of MKL's fits them exactly
_RACE_SHAPE = (1536, 384)  # the story's encoder weight, the copy a transposed run makes most
_RACE_TRIES = 3


def gather(tensor: torch.Tensor) -> torch.Tensor:
    """A contiguous copy of `tensor` (the tensor itself if it already is contiguous): what
    `tensor.contiguous()` returns, made faster for a transposed 2-D float32 tensor."""
    if tensor.is_contiguous():
        return tensor
    if _transposed_float(tensor):
        omatcopy = _omatcopy()
        if omatcopy is not None:
            rows, cols = tensor.shape
            buffer = torch.empty((rows, cols), dtype=tensor.dtype)
            omatcopy(b"R", b"T", cols, rows, 1.0, tensor.data_ptr(), rows, buffer.data_ptr(), cols)
            return buffer
    return tensor.contiguous()


def copy_back(target: torch.Tensor, result: torch.Tensor) -> None:
    """`target.copy_(result)`: a kernel's copy of its contiguous result back into its output,
    made faster for a transposed 2-D float32 target."""
    if _transposed_float(target) and _separate_contiguous(result, target):
        omatcopy = _omatcopy()
        if omatcopy is not None:
            rows, cols = target.shape
            omatcopy(b"R", b"T", rows, cols, 1.0, result.data_ptr(), cols, target.data_ptr(), rows)
            torch.autograd.graph.increment_version(target)  # as copy_ would: target changed
            return
    target.copy_(result)


def _transposed_float(tensor: torch.Tensor) -> bool:
    """A plain 2-D float32 CPU tensor laid out as the transpose of a contiguous one."""
    return (
        type(tensor) is torch.Tensor
        and tensor.dim() == 2
        and tensor.dtype == torch.float32
        and tensor.device.type == "cpu"
        and tensor.stride() == (1, tensor.shape[0])
        and min(tensor.shape) > 1  # MKL refuses empty matrices; a vector is contiguous anyway
        and not tensor.is_neg()
        and not tensor.requires_grad  # autograd would not see a copy made through pointers
    )


def _separate_contiguous(result: torch.Tensor, target: torch.Tensor) -> bool:
    """`result` is a contiguous float32 CPU tensor of target's shape in memory of its own."""
    return (
        type(result) is torch.Tensor
        and result.is_contiguous()
        and result.dtype == torch.float32
        and result.device.type == "cpu"
        and result.shape == target.shape
        and not result.is_neg()
        and result.untyped_storage().data_ptr() != target.untyped_storage().data_ptr()
    )


def _omatcopy() -> Callable[..., None] | None:
    """MKL's out-of-place transposing copy for float32, where this torch exports it, it moves
    bits exactly and it is faster than ATen's copy here; None elsewhere (then ATen copies).
    Looked up once per process."""
    if "float32" not in _OMATCOPY:
        routine = _find_omatcopy()
        usable = routine is not None and _mkl_moves_bits(routine) and _mkl_is_faster(routine)
        _OMATCOPY["float32"] = routine if usable else None
    return _OMATCOPY["float32"]


def _find_omatcopy() -> Callable[..., None] | None:
    if not torch.backends.mkl.is_available():
        return None
    folder = os.path.join(os.path.dirname(torch.__file__), "lib")
    for name in ("libtorch_cpu.so", "libtorch_cpu.dylib", "torch_cpu.dll"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            try:
                routine = ctypes.CDLL(path).MKL_Somatcopy
            except (OSError, AttributeError):  # a build without MKL's exports
                return None
            routine.restype = None
            routine.argtypes = _ARGTYPES
            return routine
    return None


def _mkl_moves_bits(routine: Callable[..., None]) -> bool:
    """Whether `routine` copies every float32 bit pattern unchanged (a multiplication by 1.0
    would quiet the signalling NaN; flush-to-zero would zero the denormal)."""
    rows, cols = _PROBE_SHAPE
    generator = torch.Generator().manual_seed(0)
    bits = torch.randint(-(2**31), 2**31 - 1, (cols, rows), dtype=torch.int32, generator=generator)
    bits[0, :4] = torch.tensor([0x7F800001, -(2**31), 1, 0x7FC00000], dtype=torch.int32)
    source = bits.view(torch.float32).t()  # (rows, cols), transposed
    copied = torch.empty((rows, cols), dtype=torch.float32)
    routine(b"R", b"T", cols, rows, 1.0, source.data_ptr(), rows, copied.data_ptr(), cols)
    back = torch.empty((cols, rows), dtype=torch.float32).t()
    routine(b"R", b"T", rows, cols, 1.0, copied.data_ptr(), cols, back.data_ptr(), rows)
    expected = source.contiguous().view(torch.int32)
    return torch.equal(copied.view(torch.int32), expected) and torch.equal(
        back.t().contiguous().view(torch.int32), bits
    )


def _mkl_is_faster(
    routine: Callable[..., None], clock: Callable[[], float] = time.process_time
) -> bool:
    """Whether `routine` gathers the story's encoder weight in less CPU time than ATen's copy_
    (best of a few alternating tries: a burst of load on a busy machine slows one try, not all)."""
    rows, cols = _RACE_SHAPE
    source = torch.zeros((cols, rows)).t()
    target = torch.empty((rows, cols))
    copies = (
        lambda: routine(
            b"R", b"T", cols, rows, 1.0, source.data_ptr(), rows, target.data_ptr(), cols
        ),
        lambda: target.copy_(source),
    )
    best = [float("inf"), float("inf")]  # MKL, ATen
    for _ in range(_RACE_TRIES):
        for index, copy in enumerate(copies):
            start = clock()
            copy()
            best[index] = min(best[index], clock() - start)
    return best[0] < best[1]
