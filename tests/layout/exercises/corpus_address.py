"""04.address: the reference, and wrong address rules keyed by their flaw."""

from __future__ import annotations

import array
import ctypes

import numpy as np
import torch

from course.layout.calculator import Layout
from tests.corpus import Corpus


def address_reference():
    def address(index, stride, offset):
        return offset + sum(i * s for i, s in zip(index, stride, strict=True))

    return address


def _no_offset():
    def address(index, stride, offset):
        return sum(i * s for i, s in zip(index, stride, strict=True))

    return address


def _reversed_strides():
    def address(index, stride, offset):
        return offset + sum(i * s for i, s in zip(index, reversed(stride), strict=True))

    return address


def _last_step_is_one():
    def address(index, stride, offset):
        *outer, last = index
        return offset + sum(i * s for i, s in zip(outer, stride, strict=False)) + last

    return address


def _three_named_dims():
    def address(index, stride, offset):
        if len(index) == 0:
            return offset
        if len(index) == 1:
            return offset + index[0] * stride[0]
        if len(index) == 2:
            return offset + index[0] * stride[0] + index[1] * stride[1]
        return offset + index[0] * stride[0] + index[1] * stride[1] + index[2] * stride[2]

    return address


def _strides_of_the_example():
    def address(index, stride, offset):
        return offset + index[0] * 6 + index[1]  # x = torch.arange(24).view(4, 6): stride (6, 1)

    return address


def _asks_torch():
    def address(index, stride, offset):
        storage = torch.arange(10_000)  # each value is its own address
        view = storage.as_strided([i + 1 for i in index], stride, offset)
        return view[tuple(index)].item()

    return address


def _course_calculator():
    def address(index, stride, offset):
        layout = Layout.strided(tuple(i + 1 for i in index), tuple(stride), offset)
        return layout.storage_index(tuple(index))

    return address


def _last_two_dims():
    def address(index, stride, offset):  # rows and columns: the last two dims
        pairs = list(zip(index, stride, strict=True))[-2:]
        return offset + sum(i * s for i, s in pairs)

    return address


def _scalar_at_slot_zero():
    def address(index, stride, offset):
        if not index:
            return 0  # "a scalar has no dims, so it sits at the start"
        return offset + sum(i * s for i, s in zip(index, stride, strict=True))

    return address


def _stride_zero_as_one():
    def address(index, stride, offset):  # "a stride of 0 cannot be right: one step moves 1"
        return offset + sum(i * max(s, 1) for i, s in zip(index, stride, strict=True))

    return address


def _numpy_dot():
    def address(index, stride, offset):
        return offset + int(np.dot(index, stride)) if index else offset

    return address


def _a_float_slot():
    def address(index, stride, offset):
        return float(offset + sum(i * s for i, s in zip(index, stride, strict=True)))

    return address


def _slot_in_bytes():
    def address(index, stride, offset):  # "an address is in bytes: 4 per float32"
        return 4 * (offset + sum(i * s for i, s in zip(index, stride, strict=True)))

    return address


def _torch_arithmetic():
    def address(index, stride, offset):
        return offset + int((torch.tensor(index) * torch.tensor(stride)).sum())

    return address


def _masked_to_32_bits():
    def address(index, stride, offset):  # "an address fits in 32 bits", as in C's unsigned
        return (offset + sum(i * s for i, s in zip(index, stride, strict=True))) & 0xFFFFFFFF

    return address


def _clamped_to_int32():
    def address(index, stride, offset):
        slot = offset + sum(i * s for i, s in zip(index, stride, strict=True))
        return min(slot, 2**31 - 1)  # "no slot is larger than an int holds"

    return address


def _a_c_int():
    def address(index, stride, offset):
        return ctypes.c_int32(offset + sum(i * s for i, s in zip(index, stride, strict=True))).value

    return address


def _numpy_int32():
    def address(index, stride, offset):
        slot = np.int32(offset)
        for i, s in zip(index, stride, strict=True):
            slot = slot + np.int32(i) * np.int32(s)
        return int(slot)

    return address


def _an_int_array():
    def address(index, stride, offset):  # the slots kept in an array of C ints
        slots = array.array("i", [offset])
        for i, s in zip(index, stride, strict=True):
            slots[0] += i * s
        return slots[0]

    return address


def _a_loop(index, stride, offset):
    slot = offset
    for d in range(len(index)):
        slot += index[d] * stride[d]
    return slot


CORPORA = (
    Corpus(
        "04.address",
        address_reference,
        wrong={
            "no offset": (_no_offset, "whatever `offset` is"),
            "strides paired with the mirrored dims": (_reversed_strides, "another dim's stride"),
            "a row-major last dim assumed": (_last_step_is_one, "the last dim to be 1 slot"),
            "three dims named one by one": (_three_named_dims, "up to 3 dims, but not with 4"),
            "x's strides (6, 1) written in": (_strides_of_the_example, "whatever `stride` is"),
            "as_strided over an arange": (_asks_torch, "asked torch"),
            "Layout.storage_index": (_course_calculator, "course's own course.layout.calculator"),
            "the last two dims only": (_last_two_dims, "up to 2 dims, but not with 3"),
            "a 0-dim tensor put at slot 0": (_scalar_at_slot_zero, "whatever `offset` is"),
            "stride 0 taken as 1": (_stride_zero_as_one, "the last dim to be 1 slot"),
            "np.dot": (_numpy_dot, "asked numpy"),
            "a float slot": (_a_float_slot, "as an int"),
            "a slot in bytes": (_slot_in_bytes, "it counts bytes (4 per element)"),
            "arithmetic done in torch": (_torch_arithmetic, "asked torch (torch.tensor"),
            "masked to 32 bits": (_masked_to_32_bits, "your arithmetic stops at 32 bits"),
            "clamped to int32's largest": (_clamped_to_int32, "your arithmetic stops at 32 bits"),
            "a ctypes.c_int32": (_a_c_int, "your arithmetic stops at 32 bits"),
            "numpy int32 scalars": (_numpy_int32, "asked numpy"),  # its overflow warning
            "an array of C ints": (_an_int_array, "your arithmetic stops at 32 bits"),
        },
        right={
            "a lambda": lambda: (
                lambda index, stride, offset: (
                    offset + sum(i * s for i, s in zip(index, stride, strict=True))
                )
            ),
            "a loop": lambda: _a_loop,
        },
    ),
)
