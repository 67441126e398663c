"""06.kernel_test: the learner writes the test that would have caught the lost write.

`breaks(kernel)` is tried on hidden kernels (`hidden_kernels`): the story's, two right ones, and
kernels broken in ways that one kind of careless test cannot see. Each hidden kernel is watched,
so a miss is explained by what the test never varied (only contiguous outputs, value=1
throughout) before what its comparison cannot see.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from course import emps
from course.exercises import Exercise, Verdict, failed, is_scaffold, passed, register
from course.kernels import placeholder_lab
from course.kernels.exercises.placeholder import hidden_kernels as hk
from course.layout.named import is_dense


@dataclass(frozen=True)
class Run:
    """One run of a hidden kernel inside the learner's test: what the test varied."""

    contiguous: bool
    dense: bool  # its elements fill one block of memory (a step-sliced output does not)
    transpose: bool  # a 2-d output stored column by column
    column_major: bool  # a 2-d output whose rows are its fastest dim (a transpose, sliced or not)
    dims: int
    offset: int
    values: tuple[object, ...]
    strided_buffers: bool
    lost: bool = False  # the whole write was lost: old values, none of them torch's (set after)

    @classmethod
    def of(cls, call: emps.KernelCall) -> Run:
        out = call.output
        return cls(
            contiguous=out.is_contiguous(),
            dense=is_dense(out),
            transpose=out.dim() == 2 and not out.is_contiguous() and out.t().is_contiguous(),
            column_major=hk.column_major(out),
            dims=out.dim(),
            offset=out.storage_offset(),
            values=tuple(call.arguments),
            strided_buffers=call.strided_buffers,
        )


Needs = Callable[[list[Run]], "str | None"]


def _noncontiguous(runs: list[Run]) -> list[Run]:
    return [r for r in runs if not r.contiguous and not r.strided_buffers]


def _needs_a_change(runs: list[Run]) -> str | None:
    """A lost write shows only on a non-contiguous output, on the story's profile (macOS 15's
    strided buffers make no copy), where the call changes the output: value=0 adds nothing."""
    if _noncontiguous(runs):
        if any(v != 0 for r in _noncontiguous(runs) for v in r.values):
            return None
        return (
            "your test ran it on non-contiguous outputs with value=0 only, where addcmul_ adds "
            "nothing: the output is torch's result whether the write is lost or not. Use a value "
            "that changes the output (neither 0 nor 1)"
        )
    if any(r.strided_buffers for r in runs):
        return (
            "your test ran it on a profile with strided buffers (macOS 15), where no copy is "
            "made and no write can be lost; test on the story's profile (run_addcmul's default)"
        )
    return (
        "your test only ran it on contiguous outputs, where the Placeholder makes no copy: the "
        "bug needs a non-contiguous output (a transposed one, say)"
    )


def _needs(seen: Callable[[Run], object], message: str, among=_noncontiguous) -> Needs:
    """What a test must have tried for a fault to show: a run of `among(runs)` where `seen`."""
    return lambda runs: None if any(seen(r) for r in among(runs)) else message


@dataclass(frozen=True)
class HiddenKernel:
    """A kernel the learner's test is tried on: what it does, why a test that says otherwise
    about whether it `breaks` is wrong, and `needs`: a message when the test never ran it where
    its fault shows."""

    does: str
    kernel: hk.Kernel
    why: str
    needs: Needs = lambda runs: None
    breaks: bool = True


COMPARE = "compare the output after the call with torch's result (run_addcmul's second value)"
EVERY_CELL = "cannot see values swapped within it; compare every cell"
HIDDEN_KERNELS: tuple[HiddenKernel, ...] = (
    HiddenKernel(
        "is 2.2.1's broken kernel under another name",
        emps.write_through_placeholder,
        f"it loses every write to a non-contiguous output; {COMPARE}",
        _needs_a_change,
    ),
    HiddenKernel(
        "gathers, computes and copies back (the working pattern)",
        emps.gather_compute_scatter,
        "it is right on every layout: compare the output with torch's result, not with its "
        "old values; a temporary (the recorder counts them) is how a right kernel handles a "
        "non-contiguous output, not a fault",
        breaks=False,
    ),
    HiddenKernel(
        "copies back through an output placeholder (the redesign)",
        emps.output_placeholder,
        f"it is right on every layout; {COMPARE}",
        breaks=False,
    ),
    HiddenKernel(
        "copies back only when the output is a 2-d transpose",
        hk.only_if(lambda out: out.dim() == 2 and out.t().is_contiguous()),
        f"it loses the write to every other non-contiguous output; {COMPARE}",
        _needs(
            lambda r: not r.transpose,
            "your test tried no non-contiguous output other than a 2-d transpose; a step-sliced "
            "w[:, ::2] or a permuted 3-d tensor is non-contiguous too, and a kernel can get one "
            "of them wrong",
        ),
    ),
    HiddenKernel(
        "copies back only to outputs whose elements fill one block of memory",
        hk.only_if(is_dense),
        f"it loses the write to a step-sliced output; {COMPARE}",
        _needs(
            lambda r: not r.dense,
            "your test never tried an output with gaps between its elements (a step-sliced "
            "w[:, ::2]): a kernel can copy back to every transposed or permuted output, whose "
            "elements fill one block of memory, and still lose the write there",
        ),
    ),
    HiddenKernel(
        "copies back only for outputs of at most 2 dims",
        hk.only_if(lambda out: out.dim() <= 2),
        f"it loses the write to a non-contiguous 3-d output; {COMPARE}",
        _needs(
            lambda r: r.dims > 2,
            "your test never tried a non-contiguous output with more than 2 dims (a permuted 3-d "
            "one, say); a kernel may handle matrices and still lose the write on anything else",
        ),
    ),
    HiddenKernel(
        "writes its result from the start of the output's storage, ignoring its offset",
        hk.from_storage_start,
        "the output changes, but not to torch's values: 'did it change?' is not 'is it "
        f"right?'; {COMPARE}",
        _needs(
            lambda r: r.offset,
            "your test never tried an output with a storage offset (one that starts inside its "
            "storage, like w[4:]); a kernel that addresses memory from the storage's start is "
            "right on every other output",
            among=list,
        ),
    ),
    HiddenKernel(
        "computes as if value were 1",
        hk.value_one,
        "its write arrives (the recorder's lost_write flag is False: that flag only says "
        "whether the graph's result reached the output), but the values are wrong; " + COMPARE,
        _needs(
            lambda r: any(v != 1 for v in r.values),
            "your test always used value=1, the default; a kernel that ignores `value` is right "
            "there and wrong everywhere else: test with another value (run_addcmul's default is "
            "0.5)",
            among=list,
        ),
    ),
    HiddenKernel(
        "writes every value 3% off",
        hk.three_percent_off,
        "a tolerance (allclose with a loose rtol, a max-difference bound) lets a 3% error "
        "through; on this emulated device a right kernel gives torch's result bit for bit: "
        "compare with torch.equal",
    ),
    HiddenKernel(
        "writes the right values in memory order (cells scrambled on a transposed output)",
        hk.unless_contiguous(hk.memory_order),
        "every value is there, in the wrong cell (the first and the last cells are right): "
        "sorted values, a sum or a mean, one element cannot see a scramble; compare every cell",
    ),
    HiddenKernel(
        "swaps two of torch's values in a non-contiguous output, keeping every sum and mean",
        hk.summary_blind_swap(),
        "two values are in each other's cells, yet its sum, mean and norm are torch's bit for "
        "bit (in float32 and float64, in any order): a summary of the output cannot see values "
        "in the wrong cells; compare every cell",
    ),
    HiddenKernel(
        "copies back all but the last row of a non-contiguous output",
        hk.unless_contiguous(hk.all_but_last_row),
        "one element or the first rows cannot see it: compare every element",
    ),
    HiddenKernel(
        "copies back every element of a non-contiguous output but one (the second)",
        hk.unless_contiguous(hk.all_but_one_element),
        "a comparison of part of the output (a row, a column, the first or last element, every "
        "other element) cannot see one lost element: compare every element",
    ),
    HiddenKernel(
        "rounds its results toward zero (the last bit wrong on about half the elements)",
        hk.round_toward_zero,
        "no tolerance sees a last-bit error: allclose (even with its default rtol=1e-5), "
        "isclose or assert_close, a max-difference bound all call it right, yet it is not "
        "torch's result. On this emulated device a right kernel gives torch's result bit for "
        "bit: compare with torch.equal",
    ),
    HiddenKernel(
        "writes NaN into a non-contiguous output",
        hk.unless_contiguous(hk.nan_garbage),
        "NaN compares False with everything, so a check like `(diff > tol).any()` is False "
        "for NaN garbage; torch.equal (or `not (diff <= tol).all()`) sees it",
    ),
    HiddenKernel(
        "swaps two of torch's values within one row of a non-contiguous output",
        hk.summary_blind_swap(line=-1),
        "two values of one row are in each other's cells, yet every row's sum and mean (sums "
        "along the last dim) and the whole sum are torch's bit for bit: a summary of each row "
        + EVERY_CELL,
    ),
    HiddenKernel(
        "swaps two of torch's values within one column of a non-contiguous output",
        hk.summary_blind_swap(line=0),
        "two values of one column are in each other's cells, yet every column's sum and mean "
        "(sums along dim 0) and the whole sum are torch's bit for bit: a summary of each column "
        + EVERY_CELL,
    ),
    HiddenKernel(
        "writes one value of a non-contiguous output one bit off, where no float32 sum sees it",
        hk.one_bit_off_unsummed(),
        "one value's last bit is wrong, yet every float32 sum and mean of the output, whole or "
        "along any dim (each row's, each column's), is torch's bit for bit: sums along every "
        "dim are still a summary, not every cell; compare every cell",
    ),
    HiddenKernel(
        "computes into a temporary and copies back only to a non-contiguous output",
        hk.copy_back_unless_contiguous,
        f"it loses the write to a contiguous output; {COMPARE}",
        _needs(
            lambda r: r.contiguous,
            "your test never tried a contiguous output; the Placeholder makes no copy there, but "
            "a kernel can still lose that write (a temporary it never copies back): test "
            "contiguous outputs too",
            among=list,
        ),
    ),
    HiddenKernel(
        "copies back to every non-contiguous output but a 2-d transpose",
        hk.only_if(lambda out: not hk.column_major(out)),
        f"it loses the write to a transposed matrix, the story's layout; {COMPARE}",
        _needs(
            lambda r: r.column_major,
            "your test never tried a 2-d transposed output (w.t(), the story's own layout); a "
            "kernel that takes a column-major matrix for contiguous loses the write there",
        ),
    ),
)


def check_kernel_test(breaks) -> Verdict:
    """06.kernel_test: the learner's test must tell each hidden kernel right from broken."""
    if not callable(breaks):
        return failed("give a function, e.g. def breaks(kernel): ...", type(breaks).__name__)
    for hidden in HIDDEN_KERNELS:
        runs: list[Run] = []
        try:
            said = breaks(watched(hidden.kernel, runs))
        except Exception as exc:
            if is_scaffold(exc):
                raise
            return failed(
                f"on a hidden kernel that {hidden.does}, your test raised "
                f"{type(exc).__name__}: {exc}"
            )
        got = _truth(said)
        if got is None:
            return failed(
                f"your test returned {said!r}; return True (it breaks) or False (a tensor of "
                "many values, or a number? torch.equal gives a bool)",
                type(said).__name__,
                "bool",
            )
        if got != hidden.breaks:
            return failed(_miss(hidden, got, runs), got, hidden.breaks)
    return passed(
        f"your test told all {len(HIDDEN_KERNELS)} hidden kernels apart: lost writes on every "
        "kind of output, contiguous or not, an ignored offset or value, values 3% off or one "
        "bit off, a scramble, a swap no sum sees, a missing row or element and NaN garbage, and "
        "it never blamed a right kernel"
    )


def _truth(got: object) -> bool | None:
    """The yes or no a test returned: a bool, numpy's bool or a one-element bool tensor (what
    `(result != expected).any()` gives) all answer the question; anything else (a count, a
    tensor of many values) does not say which it means, so it is None."""
    if isinstance(got, bool | np.bool_):
        return bool(got)
    if isinstance(got, torch.Tensor) and got.dtype == torch.bool and got.numel() == 1:
        return bool(got)
    return None


def watched(kernel: hk.Kernel, runs: list[Run]) -> hk.Kernel:
    """The hidden kernel, noting each run (a new function: its name tells nothing)."""

    def hidden_kernel(call):
        run = Run.of(call)
        old, answer = call.output.cpu().clone(), _torch_answer(call)
        kernel(call)
        lost = answer is not None and torch.equal(call.output.cpu(), old)
        lost = lost and not answer.eq(old).any()
        runs.append(dataclasses.replace(run, lost=bool(lost)))

    return hidden_kernel


def _torch_answer(call: emps.KernelCall) -> torch.Tensor | None:
    """Torch's result of an in-place addcmul_/addcdiv_ call, from its inputs before the kernel
    runs (None for any other call)."""
    op = placeholder_lab.ADDC_FAMILIES.get(call.family)
    if op is None or not call.in_place or len(call.inputs) != 3 or len(call.arguments) != 1:
        return None
    old, t1, t2 = (t.cpu() for t in call.inputs)
    return op(old, t1, t2, value=call.arguments[0])


def _miss(hidden: HiddenKernel, got: bool, runs: list[Run]) -> str:
    said = "it breaks" if got else "it does not break"
    where = f"on a hidden kernel that {hidden.does}, your test said {said}"
    if not runs:
        return (
            f"{where} without running it: your test never ran the kernel it was given. A name "
            "or the function's identity says nothing about what a kernel does: run it "
            "(placeholder_lab.run_addcmul(kernel, output)) and compare"
        )
    needs = hidden.needs(runs)
    if needs is None and not got and any(r.lost for r in runs):
        return (
            f"{where}, yet it ran it on an output whose write it lost (every value old, none "
            "torch's): any comparison of the values sees that. Either your test never compares the "
            f"values ({COMPARE}), or it does not return True as soon as one output is wrong "
            "(a flag that the next output overwrites, all() instead of any(), a vote)"
        )
    return f"{where}: {needs or hidden.why}"


register(
    Exercise(
        name="06.kernel_test",
        prompt="Write `breaks(kernel) -> bool`: True when `out.addcmul_(t1, t2, value=v)` run "
        "with this kernel leaves anything but torch's result in `out`, for some output layout "
        "(contiguous, transposed, step-sliced, with a storage offset, permuted 3-d) or value. "
        "placeholder_lab.run_addcmul(kernel, output, value) runs one experiment.",
        checker=check_kernel_test,
        hint="Run the kernel on one output of every layout (placeholder_lab.layouts(shape, "
        "names) makes them; 'permuted' needs a 3-d shape) with a value other than 1, and "
        "compare each result with torch's bit for bit (torch.equal).",
        minutes=20,
    )
)
