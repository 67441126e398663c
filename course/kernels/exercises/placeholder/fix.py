"""06.fix_addcmul: the learner's fixed kernel, under the device's contract, on hidden calls.

Each hidden call (addcmul_ and addcdiv_, one MPS kernel serves both; 1-d to 4-d outputs,
offsets, several values) is compared with torch bit for bit, read through the output's storage;
a miss is explained by what the contract noticed (the graph never run, `call.output` rebound or
its memory swapped, a placeholder on the output itself, a strided temporary). Then the story's
plateau run is redone with the kernel installed: the encoder must train.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch

from course import emps
from course.emps.mps_kernels import same_bits
from course.exercises import (
    Exercise,
    Verdict,
    failed,
    is_scaffold,
    not_attempted,
    passed,
    ready_made,
    register,
)
from course.kernels.contract import KernelNotes, under_contract
from course.kernels.exercises.placeholder.outputs import described, head, hidden_output
from course.kernels.placeholder_lab import CHECK_STEPS, private_backend, run_addc
from course.model.runs import run

FIX_VARIANTS: tuple[tuple[str, str, float], ...] = (  # (output layout, family, value)
    ("transposed", "addcmul", 0.5),
    ("transposed", "addcdiv", -1.5),
    ("step-sliced", "addcmul", 2.0),
    ("row-sliced", "addcdiv", 0.5),
    ("storage-offset", "addcmul", -0.25),
    ("transposed with a storage offset", "addcdiv", 0.75),
    ("permuted 3-d", "addcmul", 1.5),
    ("4-d, two dims swapped", "addcdiv", -0.5),
    ("channels-last 4-d", "addcmul", -2.0),
    ("step-sliced 1-d", "addcdiv", 1.25),
    ("contiguous", "addcmul", 0.5),
)
# MPS has float16 and bfloat16 tensors: a temporary must take the output's dtype. Tried last,
# so each float32 call above says its cause first. (dtype, output layout, family, value)
LOW_PRECISION: tuple[tuple[torch.dtype, str, str, float], ...] = (
    (torch.float16, "transposed", "addcdiv", 0.75),
    (torch.bfloat16, "step-sliced", "addcmul", -1.5),
)

CLONE_NOTE = (
    "Your temporary has stride {stride}, the output's own layout: clone() and empty_like() keep "
    "the layout (preserve_format, notebook 04), so the Placeholder silently gathered yet another "
    "copy, the graph wrote there, and copying your temporary back copied what it held before "
    "the graph ran (old values after a clone(), uninitialised memory after an empty_like()). A "
    "temporary the graph writes into must be contiguous."
)
BOTH_FAMILIES = (
    " (One MPS kernel serves addcmul_ and addcdiv_, and Adam's parameter update is an "
    "addcdiv_: your kernel runs for both.)"
)
BYPASS = (
    "your kernel never ran the graph: it computed the result itself (a formula of its own, or "
    "nothing). On the device call.output lives in GPU memory and only the op's graph computes "
    "there; a kernel's job is to get the graph's result into the output, through placeholders "
    "(and one kernel serves addcmul_ and addcdiv_: a formula written for one is wrong for the "
    "other)"
)
UPDATED = ("old values", "the output updated")
REBOUND = (
    "your kernel rebound call.output (`call.output = ...`): that changes what the name means "
    "inside your kernel, not the caller's tensor, which kept its old values. Copy into it: "
    "call.output.copy_(temporary)"
)
SWAPPED = (
    "`call.output.data = ...` (or call.output.set_(...)) swapped another tensor's memory into "
    "the Python object: the output's own storage, which other views share (Adam's exp_avg_sq, a "
    "parameter), never changed. Copy into it: call.output.copy_(temporary)"
)
PLACEHOLDER_ON_OUTPUT = (
    "The graph's output placeholder wrapped call.output itself, so the Placeholder gathered a "
    "contiguous copy, the graph wrote that copy and nothing copied it back (2.2.1's bug)."
)
NOT_COPIED = (
    "The graph wrote your temporary, but nothing copied it into call.output after the graph "
    "ran: call.output.copy_(temporary)."
)
ONLY_SOME = (
    " Yet your kernel's result did reach a {layout} output: your copy back runs only for some "
    "outputs. Every non-contiguous output needs it, whatever its number of dims, strides or "
    "storage offset."
)
COURSE_KERNELS = (emps.gather_compute_scatter, emps.output_placeholder)  # answers, not yours
BORROWED = (
    "your kernel called the course's own working kernel, emps.{name}, to do the work: the fix "
    "must do the gather, compute and scatter itself (a contiguous temporary, the graph run on "
    "placeholders, the copy back into call.output), not hand the call to the course's fixed "
    "kernel"
)


def fix_variants() -> list[tuple[str, str, float, torch.Tensor]]:
    """The calls a fixed kernel is tried on: (layout, family, value, output)."""
    calls = [
        (layout, family, value, hidden_output(layout, seed))
        for seed, (layout, family, value) in enumerate(FIX_VARIANTS)
    ]
    return calls + [
        (layout, family, value, hidden_output(layout, seed, dtype))
        for seed, (dtype, layout, family, value) in enumerate(LOW_PRECISION)
    ]


def check_kernel_layouts(kernel: Callable[[emps.KernelCall], None]) -> Verdict | None:
    """Compare the kernel with torch on every hidden call, bit for bit; a failed Verdict or None."""
    copied_on: list[str] = []  # non-contiguous outputs the kernel got right so far
    for layout, family, value, output in fix_variants():
        where = f"on {family}_ (value={value}) into {described(layout, output)}"
        notes, starts = KernelNotes(), []
        try:
            watched = under_contract(_noting_storage_start(kernel, starts), notes)
            result, expected, _ = run_addc(watched, output, family, value)
        except Exception as exc:
            if is_scaffold(exc):
                return not_attempted("your kernel still raises NotImplementedError.")
            if notes.violation:
                return failed(f"{where}: {notes.violation}", *notes.shown)
            return failed(f"{where} your kernel raised {type(exc).__name__}: {exc}")
        if not same_bits(result, expected):
            both = BOTH_FAMILIES if family == "addcdiv" else ""
            if starts and same_bits(starts[-1], expected):
                return _from_storage_start(where, output)
            return _fix_failure(notes, where, both, (result, expected, output), copied_on)
        if not output.is_contiguous():
            copied_on.append(layout)
    return None


def _noting_storage_start(kernel: Callable, starts: list[torch.Tensor]) -> Callable:
    """`kernel`, noting what the output's storage holds from its start, laid out like the
    output, after the kernel ran (for an output with a storage offset): where a kernel that
    ignores the offset writes."""

    def watched(call: emps.KernelCall) -> None:
        kernel(call)
        out = call.output
        if out.storage_offset():
            start = torch.empty(0, dtype=out.dtype)
            starts.append(start.set_(out.untyped_storage(), 0, out.shape, out.stride()).clone())

    return watched


def _from_storage_start(where: str, output: torch.Tensor) -> Verdict:
    return failed(
        f"{where} your kernel wrote torch's result at the start of the output's storage, "
        f"not where the output starts (offset {output.storage_offset()}): a view made "
        "with storage offset 0 (as_strided(size, stride) with an offset of 0?) is other "
        "tensors' memory. Copy into call.output itself",
        "the storage's first elements",
        "the output's own elements",
    )


def _fix_failure(notes: KernelNotes, where: str, both: str, values, copied_on) -> Verdict:
    """Why the kernel's result is not torch's: the first cause the notes show. `values`: the
    result, torch's and the output before; `copied_on`: the non-contiguous outputs it got
    right before this one (a copy back on some only)."""
    result, expected, before = values
    if notes.graph_runs == 0:
        return failed(f"{where} {BYPASS}", head(result), head(expected))
    if "output" in notes.rebound or notes.swapped:
        return failed(f"{where} {REBOUND if notes.rebound else SWAPPED}", *UPDATED)
    if notes.strided_temporaries:
        clone = CLONE_NOTE.format(stride=notes.strided_temporaries[0])
        lost = f"{where} the graph's result never reached the output. {clone}{both}"
        return failed(lost, head(result), head(expected))
    partial = _partly_written(result, expected, before)
    if partial or not same_bits(result, before):
        wrong = partial or "your kernel wrote wrong values."
        return failed(f"{where} {wrong}{both}", head(result), head(expected))
    cause = PLACEHOLDER_ON_OUTPUT if notes.placeholder_on_output else NOT_COPIED
    if copied_on and not notes.placeholder_on_output:
        cause += ONLY_SOME.format(layout=copied_on[0])
    lost = f"{where} the result never reached the output: it still holds its old values. "
    return failed(lost + cause + both, head(result), UPDATED[1])


def _partly_written(result: torch.Tensor, expected: torch.Tensor, before: torch.Tensor) -> str:
    """What a copy back of part of the result looks like: some elements torch's, every other
    one its old value ('' when the output is not like that)."""
    new = result.eq(expected)
    old = result.eq(before) & ~new
    if not new.any() or not old.any() or not (new | old).all():
        return ""
    return (
        f"the result reached only part of the output: {int(old.sum())} of {result.numel()} "
        "elements still hold their old values. Copy the whole temporary back, whatever the "
        "output's shape: call.output.copy_(temporary)"
    )


def check_fix(kernel) -> Verdict:
    """06.fix_addcmul: right on every hidden call under the contract, then the plateau trains."""
    if not callable(kernel):
        return failed(
            "the answer must be a kernel function, `def my_kernel(call): ...`",
            type(kernel).__name__,
            "a function taking a KernelCall",
        )
    if inspect.unwrap(kernel) in COURSE_KERNELS:  # check() hands over a wrapper
        return failed(
            f"that is the course's own working kernel, emps.{kernel.__name__}, not yours: write "
            "my_kernel(call) yourself (the pattern is yours to reproduce; the lesson is in "
            "writing it)",
            f"emps.{kernel.__name__}",
            "your own kernel",
        )
    with ready_made({k.__name__: k for k in COURSE_KERNELS}) as used:
        verdict = check_kernel_layouts(kernel)
    if verdict is not None:  # a wrong value is the first cause, whoever computed it
        return verdict
    if used:
        return failed(BORROWED.format(name=used[0]), f"emps.{used[0]}(call)", "your own kernel")
    backend = private_backend(under_contract(kernel, KernelNotes()))
    summary = run(backend=backend, steps=CHECK_STEPS, progress=None).summary()
    if summary["encoder_frozen"]:
        return failed(
            f"right on every layout, yet after {CHECK_STEPS} Adam steps the encoder has not moved",
            "encoder frozen",
            "encoder changes",
        )
    if not summary["encoder_max_exp_avg_sq"]:
        return failed(
            "the encoder moves, but its exp_avg_sq is still 0",
            summary["encoder_max_exp_avg_sq"],
            "> 0",
        )
    return passed(
        f"right on all {len(fix_variants())} hidden calls (addcmul_ and addcdiv_, 1-d to 4-d, "
        "channels-last, offsets, values, float16 and bfloat16), and the plateau run trains: "
        f"encoder moved by {summary['encoder_max_change']:.3g}, its max exp_avg_sq is "
        f"{summary['encoder_max_exp_avg_sq']:.3g} (was exactly 0)"
    )


register(
    Exercise(
        name="06.fix_addcmul",
        prompt="Write `my_kernel(call)`, a fixed addcmul_ kernel: its result must reach "
        "`call.output` whatever the output's layout and dtype (float32, float16 or bfloat16), "
        "and the graph only ever gets contiguous buffers. It is installed into a private buggy "
        "backend and the plateau run is redone.",
        checker=check_fix,
        hint="Do what the working sibling does: when the output is not contiguous, let the graph "
        "write into a contiguous temporary (through a placeholder), then copy the temporary "
        "into call.output.",
        minutes=15,
    )
)
