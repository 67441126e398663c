"""06.output_placeholder's test data: the notebook's class, right classes written other ways, and
classes each wrong in one way, with the words their feedback must contain."""

from __future__ import annotations

import torch

from course import emps
from tests.corpus import Corpus


def output_placeholder():
    class MyOutputPlaceholder:
        def __init__(self, tensor):
            self.tensor = tensor
            self.buffer = tensor.contiguous()  # the tensor itself when it already is contiguous

        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc_value, traceback):
            if exc_type is None and self.buffer is not self.tensor:
                self.tensor.copy_(self.buffer)

    return MyOutputPlaceholder


def _copy_back(self):
    self.tensor.copy_(self.buffer)


def variant(
    buffer=torch.Tensor.contiguous,
    copy_back=_copy_back,
    when_failed=False,
    handled=False,
    on_enter=False,
    on_delete=False,
):
    """A factory of the reference's shape with one thing changed: the buffer, the copy back,
    when it runs."""

    class Variant:
        def __init__(self, tensor):
            self.tensor, self.buffer = tensor, buffer(tensor)

        def __enter__(self):
            if on_enter and self.buffer is not self.tensor:
                copy_back(self)
            return self

        def __exit__(self, exc_type, exc_value, traceback):
            copies = not (on_enter or on_delete) and (exc_type is None or when_failed)
            if copies and self.buffer is not self.tensor:
                copy_back(self)
            return handled

        def __del__(self):
            if on_delete and self.buffer is not self.tensor:
                copy_back(self)

    return lambda: Variant


def _copy_back_if(condition):
    """A copy back that runs only for tensors where `condition(tensor)` holds."""

    def copy_back(self):
        if condition(self.tensor):
            self.tensor.copy_(self.buffer)

    return copy_back


class _EnterGivesBuffer:
    def __init__(self, tensor):
        self.tensor, self.buffer = tensor, tensor.contiguous()

    def __enter__(self):
        return self.buffer  # "the graph writes into the buffer", so hand it the buffer

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is None and self.buffer is not self.tensor:
            self.tensor.copy_(self.buffer)


class _Delegating:
    """The course's OutputPlaceholder wrapped in a class of one's own."""

    def __init__(self, tensor):
        self.inner = emps.OutputPlaceholder(tensor)
        self.buffer = self.inner.buffer

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return self.inner.__exit__(*exc_info)


class _ResetOnFailure:
    def __init__(self, tensor):
        self.tensor, self.buffer = tensor, tensor.contiguous()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None:
            self.tensor.zero_()  # "a failed op leaves a clean output"
        elif self.buffer is not self.tensor:
            self.tensor.copy_(self.buffer)


class _NoEnter:
    def __init__(self, tensor):
        self.tensor, self.buffer = tensor, tensor.contiguous()

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.tensor.copy_(self.buffer)


def _rebind_tensor(self):
    self.tensor = self.buffer


def _contiguous_in_some_format(tensor):
    """ "Channels-last is contiguous too": such a tensor is its own buffer then."""
    channels_last = tensor.dim() == 4 and tensor.is_contiguous(memory_format=torch.channels_last)
    return tensor if channels_last else tensor.contiguous()


def _from_storage_start(tensor):
    """A contiguous tensor's memory, addressed from its storage's start (offset ignored)."""
    if not tensor.is_contiguous():
        return tensor.contiguous()
    return tensor.as_strided(tensor.shape, tensor.stride(), 0)


def _last_stride_test(tensor):
    return tensor if tensor.stride(-1) == 1 else tensor.contiguous()


class _SliceAssigned:
    def __init__(self, tensor):
        self.out, self.buffer = tensor, tensor.contiguous()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *rest):
        if exc_type is None and self.buffer is not self.out:
            self.out[...] = self.buffer
        return False


class _Slotted:  # attributes in __slots__: no instance __dict__
    __slots__ = ("tensor", "buffer")

    def __init__(self, tensor):
        self.tensor, self.buffer = tensor, tensor.contiguous()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is None and not self.tensor.is_contiguous():
            self.tensor.copy_(self.buffer)


def _float32_buffer(tensor):
    """A fresh buffer of the tensor's shape, in torch's default dtype (float32)."""
    return tensor if tensor.is_contiguous() else torch.empty(tensor.shape)


def _half_or_float(tensor):
    """ "Half precision needs a half buffer, everything else float32": bfloat16 forgotten."""
    if tensor.is_contiguous():
        return tensor
    half = tensor.dtype == torch.float16
    return torch.empty(tensor.shape, dtype=torch.float16 if half else torch.float32)


def _float_copy(tensor):
    """The tensor's values as a contiguous float32 copy: .float() where .contiguous() belongs."""
    return tensor if tensor.is_contiguous() else tensor.float().contiguous()


SOME = "copies the buffer back only for some tensors"
OWN = "the course's own OutputPlaceholder"
CORPORA = (
    Corpus(
        "06.output_placeholder",
        output_placeholder,
        wrong={
            "no copy back": (
                variant(copy_back=lambda self: None),
                "nothing copied the buffer into the tensor",
            ),
            "a clone() buffer keeps the layout": (
                variant(buffer=torch.Tensor.clone),
                "contiguous buffers only",
            ),
            "copies in __enter__": (variant(on_enter=True), "after the graph wrote it"),
            "copies a contiguous tensor too": (
                variant(buffer=lambda t: t.clone(memory_format=torch.contiguous_format)),
                "wasted copy",
            ),
            "copies back when collected": (variant(on_delete=True), "__del__"),
            "__exit__ returns True": (variant(handled=True), "swallowed"),
            "copies back after a failure": (variant(when_failed=True), "exc_type is None"),
            "self.tensor = self.buffer": (
                variant(copy_back=_rebind_tensor),
                "rebound self.tensor",
            ),
            "self.buffer.copy_(self.tensor)": (
                variant(copy_back=lambda self: self.buffer.copy_(self.tensor)),
                "wrong way",
            ),
            "a last stride of 1 taken for contiguous": (
                variant(buffer=_last_stride_test),
                "row-sliced",
            ),
            "emps.OutputPlaceholder handed in": (
                lambda: emps.OutputPlaceholder,
                "the course's own placeholder",
            ),
            "2-d tensors only": (variant(copy_back=_copy_back_if(lambda t: t.dim() == 2)), SOME),
            "no storage offset only": (
                variant(copy_back=_copy_back_if(lambda t: not t.storage_offset())),
                SOME,
            ),
            "last stride other than 1 only": (
                variant(copy_back=_copy_back_if(lambda t: t.stride(-1) != 1)),
                SOME,
            ),
            "swaps the memory with .data": (
                variant(copy_back=lambda self: setattr(self.tensor, "data", self.buffer)),
                "`self.tensor.data = ...`",
            ),
            "swaps the memory with set_": (
                variant(copy_back=lambda self: self.tensor.set_(self.buffer)),
                "self.tensor.set_(...)",
            ),
            "an empty_like buffer": (
                variant(buffer=torch.empty_like),
                "clone() and empty_like() keep",
            ),
            "__enter__ returns the buffer": (
                lambda: _EnterGivesBuffer,
                "__enter__ must return the placeholder itself",
            ),
            "a function that makes the course's": (
                lambda: lambda tensor: emps.OutputPlaceholder(tensor),
                OWN,
            ),
            "a class that delegates to the course's": (lambda: _Delegating, OWN),
            "zeroes the tensor when the graph failed": (
                lambda: _ResetOnFailure,
                "changed the tensor anyway",
            ),
            "channels-last taken for contiguous": (
                variant(buffer=_contiguous_in_some_format),
                "channels-last 4-d output",
            ),
            "a contiguous tensor's buffer from its storage's start": (
                variant(buffer=_from_storage_start),
                "a storage offset ignored",
            ),
            "__enter__ returns None": (lambda: _NoEnter, "return self"),
            "a float32 buffer, whatever the tensor's dtype": (
                variant(buffer=_float32_buffer),
                "a torch.float32 output buffer for a torch.float16 output",
            ),
            "a buffer that knows float16 but not bfloat16": (
                variant(buffer=_half_or_float),
                "a torch.float32 output buffer for a torch.bfloat16 output",
            ),
            "a contiguous buffer made with .float()": (
                variant(buffer=_float_copy),
                "A temporary must take the output's dtype",
            ),
        },
        right={
            "slice-assigned": lambda: _SliceAssigned,
            "slotted": lambda: _Slotted,
            "an empty buffer of the tensor's dtype": variant(
                buffer=lambda t: t if t.is_contiguous() else torch.empty(t.shape, dtype=t.dtype)
            ),
        },
    ),
)
