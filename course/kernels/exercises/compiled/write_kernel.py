"""Notebook 07's compiled kernel: my_addcmul_ in C++, right on every layout and value.

`07.write_kernel` builds the learner's source and runs it on hidden calls in a child process
(course.kernels.cpp.learner): transposed, sliced, offset, permuted, 0-d to 8-d, empty and
broadcast tensors, storage offsets past 2^32, values that are not round numbers, each element
found through its own strides and offset.
"""

from __future__ import annotations

from course.errors import CourseError
from course.exercises import Exercise, Verdict, failed, not_attempted, passed, register
from course.kernels.cpp import learner
from course.kernels.cpp.learner import SKELETON


def check_write_kernel(source) -> Verdict:
    """07.write_kernel: compile the learner's C++ and run it on hidden layouts (child process).

    Without a compiler the check is skipped, not failed, and the skeleton as given is not
    attempted yet: neither is journaled."""
    if isinstance(source, str) and _squeezed(source) in {
        _squeezed(SKELETON),
        _squeezed(learner.PRELUDE + SKELETON),
    }:
        return not_attempted(
            "that is the skeleton as printed (the naive loop): change it so that each tensor's "
            "elements are found through its own strides and offset, then run the cell."
        )
    try:
        report = learner.check_source(source)
    except learner.NoCompiler as exc:
        return Verdict(False, str(exc), attempted=False)
    except CourseError as exc:  # not a kernel, or a compile error: say which
        return failed(str(exc))
    if report.passed:
        return passed(
            f"right on all {len(learner.VARIANTS)} hidden calls (transposed, step-sliced, "
            "offset, permuted 3-d, 4-d to 8-d, 1-d and 0-d, empty, mixed, offset and broadcast "
            "inputs, a and b in different layouts, all three alike with gaps, offsets past "
            "2^32, other values, e among them): each element found through its own strides and "
            "offset, in every tensor"
        )
    nudge = _kernel_nudge(report.problem)
    return failed(
        f"on {report.variant} your kernel {report.problem}. {nudge}".strip(),
        report.yours,
        report.expected or "torch's addcmul_",
    )


def _squeezed(source: str) -> str:
    """The source without whitespace: the skeleton re-indented is still the skeleton."""
    return "".join(source.split())


def _kernel_nudge(problem: str) -> str:
    if any(said in problem for said in ("unchanged", "wrong elements", "no elements", "no gaps")):
        return ""  # the problem already says where the results went, or what to follow
    if "crashed" in problem or "outside" in problem:
        return "Check that every index stays below its size, and each tensor uses its own strides."
    if "`value`" in problem or "used value" in problem or "overwrote" in problem:
        return "The kernel computes out[idx] += value * a[idx] * b[idx], with the value passed in."
    if "input" in problem:
        return "Only out is written; a and b are read."
    return "Element idx of a tensor lives at offset + sum(idx[d] * stride[d]), per tensor."


register(
    Exercise(
        name="07.write_kernel",
        prompt="Write my_addcmul_ in C++ (start from the skeleton, course.kernels.cpp.learner."
        "SKELETON, and keep its signature): out += value * a * b, right for every layout of "
        "every tensor (any number of dims, storage offsets of any size, past 2^32 too, strides, "
        "broadcast inputs) and every value, not only round ones.",
        checker=check_write_kernel,
        hint="For each flat position i, turn i into an index (last dim fastest: k = rest % "
        "sizes[d], rest /= sizes[d]) and add k * stride[d] to each tensor's own offset.",
        minutes=30,
    )
)
