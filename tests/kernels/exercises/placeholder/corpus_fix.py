"""06.fix_addcmul's test data: the notebook's fixed kernel, the same pattern written other ways,
and kernels each wrong in one way, with the words their feedback must contain."""

from __future__ import annotations

import torch

from course import emps
from course.emps.mps_kernels import output_placeholder as imported_output_placeholder
from tests.corpus import Corpus


def fix_addcmul():
    def my_kernel(call):
        temporary = call.output.contiguous()  # the output itself when it already is contiguous
        inputs = [call.placeholder(t) for t in call.inputs]
        call.run_graph(call.placeholder(temporary), inputs)
        if temporary is not call.output:
            call.output.copy_(temporary)  # scatter the result back into the real output

    return my_kernel


def _contiguous(call):
    return call.output.contiguous()


def _copy_back(call, temporary):
    call.output.copy_(temporary)


def variant(temporary=_contiguous, copy_back=_copy_back, early=False):
    """A factory of a fix built like the reference, with its temporary, copy back and timing
    swapped."""

    def make():
        def my_kernel(call):
            made = temporary(call)
            if early:
                copy_back(call, made)
            call.run_graph(call.placeholder(made), [call.placeholder(t) for t in call.inputs])
            if not early and made is not call.output:
                copy_back(call, made)

        return my_kernel

    return make


def _skip_placeholder():
    def my_kernel(call):
        call.graph(call.output, call.inputs)  # right on a CPU, impossible for MPSGraph < macOS 15

    return my_kernel


def _raw_tensor():
    def my_kernel(call):
        temporary = call.output.contiguous()
        call.run_graph(temporary, [call.placeholder(t) for t in call.inputs])
        call.output.copy_(temporary)

    return my_kernel


def _formula():
    def my_kernel(call):
        out, t1, t2 = call.inputs
        call.output.addcmul_(t1, t2, value=call.arguments[0])  # the graph never runs

    return my_kernel


def _addcmul_only():
    def my_kernel(call):
        if call.family == "addcmul":
            emps.gather_compute_scatter(call)
        else:
            emps.write_through_placeholder(call)

    return my_kernel


def _forwards_to_the_course():
    def my_kernel(call):
        emps.gather_compute_scatter(call)  # the course's fixed kernel, called, not written

    return my_kernel


def _forwards_as_imported():
    def my_kernel(call):
        imported_output_placeholder(call)  # imported under another name: still noticed

    return my_kernel


def _rebind(call, temporary):
    call.output = temporary


def _swap(call, temporary):
    call.output.data = temporary


def _copy_back_if(condition):
    """A copy back that runs only for outputs where `condition(output)` holds."""

    def copy_back(call, temporary):
        if condition(call.output):
            call.output.copy_(temporary)

    return copy_back


def _contiguous_in_some_format(call):
    """ "Channels-last is contiguous too": the output itself goes to the graph then."""
    out = call.output
    kept = out.dim() == 4 and out.is_contiguous(memory_format=torch.channels_last)
    return out if kept else out.contiguous()


def _copy_from_storage_start(call, temporary):
    """A copy back into a view of the output's storage from its start: the offset ignored."""
    out = call.output
    out.as_strided(out.shape, out.stride(), 0).copy_(temporary)


def _matrix_temporary(call):
    rows, cols = call.output.shape  # fails on anything but a matrix
    return torch.empty(rows, cols)


def _half_or_float(call):
    """ "Half precision needs a half temporary, everything else float32": bfloat16 forgotten."""
    half = call.output.dtype == torch.float16
    return torch.zeros(call.output.shape, dtype=torch.float16 if half else torch.float32)


def _through_the_output_placeholder():
    def my_kernel(call):
        with call.output_placeholder(call.output) as output:
            call.run_graph(output, [call.placeholder(t) for t in call.inputs])

    return my_kernel


SOME = "your copy back runs only for some outputs"
CORPORA = (
    Corpus(
        "06.fix_addcmul",
        fix_addcmul,
        wrong={
            "2.2.1's kernel": (
                lambda: emps.write_through_placeholder,
                "wrapped call.output itself",
            ),
            "never copies back": (
                variant(copy_back=lambda call, t: None),
                "nothing copied it into call.output after the graph ran",
            ),
            "skips the placeholder": (_skip_placeholder, "contiguous buffers only"),
            "a clone() temporary": (
                variant(lambda call: call.output.clone()),
                "clone() and empty_like() keep",
            ),
            "run_graph on a raw tensor": (_raw_tensor, "raw tensor"),
            "a formula of its own": (_formula, "never ran the graph"),
            "call.output = temporary": (variant(copy_back=_rebind), "rebound call.output"),
            "swaps the memory with .data": (variant(copy_back=_swap), "`call.output.data = ...`"),
            "copies back before the graph": (variant(early=True), "after the graph ran"),
            "fixes addcmul only": (_addcmul_only, "serves addcmul_ and addcdiv_"),
            "a temporary for matrices only": (variant(_matrix_temporary), "permuted 3-d"),
            "the course's kernel handed in": (
                lambda: emps.gather_compute_scatter,
                "the course's own working kernel",
            ),
            "the course's kernel called inside": (
                _forwards_to_the_course,
                "do the gather, compute and scatter itself",
            ),
            "copies back to 2-d outputs only": (
                variant(copy_back=_copy_back_if(lambda out: out.dim() == 2)),
                SOME,
            ),
            "copies back to 2-d transposes only": (
                variant(copy_back=_copy_back_if(lambda o: o.dim() == 2 and o.t().is_contiguous())),
                SOME,
            ),
            "copies back without a storage offset only": (
                variant(copy_back=_copy_back_if(lambda out: out.storage_offset() == 0)),
                SOME,
            ),
            "a last stride other than 1 taken for non-contiguous": (
                variant(copy_back=_copy_back_if(lambda out: out.stride(-1) != 1)),
                SOME,
            ),
            "an empty_like temporary": (
                variant(lambda call: torch.empty_like(call.output)),
                "uninitialised memory after an empty_like()",
            ),
            "set_ swaps the memory": (
                variant(copy_back=lambda call, t: call.output.set_(t)),
                "call.output.set_(...)",
            ),
            "copies back the first row": (
                variant(copy_back=lambda call, t: call.output[0].copy_(t[0])),
                "only part of the output",
            ),
            "copies into an input": (
                variant(copy_back=lambda call, t: call.inputs[-1].copy_(t)),
                "nothing copied it into call.output",
            ),
            "channels-last taken for contiguous": (
                variant(_contiguous_in_some_format),
                "channels-last 4-d output",
            ),
            "copies back with the storage offset ignored": (
                variant(copy_back=_copy_from_storage_start),
                "at the start of the output's storage",
            ),
            "the course's placeholder kernel handed in": (
                lambda: emps.output_placeholder,
                "course's own",
            ),
            "the course's placeholder kernel called under another name": (
                _forwards_as_imported,
                "emps.output_placeholder, to do the work: the fix must do the gather",
            ),
            "a float32 temporary, whatever the output's dtype": (
                variant(lambda call: torch.empty(call.output.shape)),
                "could not run. A temporary must take the output's dtype",
            ),
            "a temporary that knows float16 but not bfloat16": (
                variant(_half_or_float),
                "output buffer for a torch.bfloat16 output",
            ),
        },
        right={
            "through call.output_placeholder": _through_the_output_placeholder,
            "an empty temporary of the output's dtype": variant(
                lambda call: torch.empty(call.output.shape, dtype=call.output.dtype)
            ),
        },
    ),
)
