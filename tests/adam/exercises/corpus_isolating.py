"""03.isolate_op's test data: the notebook's experiment, right experiments designed otherwise,
and the wrong ones a learner writes, each keyed by its flaw with the words its feedback must
contain. An experiment with one flaw (`isolate_with`, `isolate_comparing`) is otherwise the
reference, so its feedback can only be about that flaw; `measured` is the experiment written
once, for answers that vary only what it is given.
"""

from __future__ import annotations

import functools

import torch

from course import emps
from course.adam import op_isolation
from course.adam.op_isolation import OP_CALLS
from course.layout.named import laid_out
from tests.corpus import Corpus


def reference():
    def isolate_op(op, output_layout, input_layout):
        gen = torch.Generator().manual_seed(0)
        start = torch.randn(6, 4, generator=gen)  # non-zero: "nothing" differs from "zeros"
        a, b = torch.randn(6, 4, generator=gen), torch.rand(6, 4, generator=gen) + 0.5
        expected = start.clone()
        OP_CALLS[op](expected, a, b)  # the CPU's answer
        out = laid_out(start, output_layout, emps.DEVICE)
        OP_CALLS[op](out, *(laid_out(t, input_layout, emps.DEVICE) for t in (a, b)))
        return "updates" if torch.equal(out.cpu(), expected) else "lost"

    return isolate_op


def _isolate_from_memory():
    def isolate_op(op, output_layout, input_layout):  # the story's table, not a measurement
        broken = op in ("addcmul_", "addcdiv_")
        return "lost" if broken and output_layout != "contiguous" else "updates"

    return isolate_op


def isolate_with(flaw: str):
    """The experiment with one flaw: run on the CPU, into a contiguous copy, from zeros, with
    the layouts swapped or the inputs always contiguous, on the story's profile whatever is in
    force, or with its conclusion the other way round."""

    def isolate_op(op, output_layout, input_layout):
        gen = torch.Generator().manual_seed(0)
        start = torch.zeros(6, 4) if flaw == "zeros" else torch.randn(6, 4, generator=gen)
        a, b = torch.randn(6, 4, generator=gen), torch.rand(6, 4, generator=gen) + 0.5
        device = "cpu" if flaw == "cpu" else emps.DEVICE
        if flaw == "swapped":
            output_layout, input_layout = input_layout, output_layout
        out = laid_out(start, output_layout, device)
        if flaw == "contiguous copy":
            out = out.contiguous()
        inputs = [
            laid_out(t, "contiguous" if flaw == "contiguous inputs" else input_layout, device)
            for t in (a, b)
        ]
        profile = emps.TORCH_2_2_1 if flaw == "story's profile" else emps.current_profile()
        with emps.use_profile(profile):
            OP_CALLS[op](out, *inputs)
        unchanged = torch.equal(out.cpu(), start)
        return "updates" if unchanged == (flaw == "inverted") else "lost"

    return isolate_op


def isolate_comparing(flaw: str):
    """The experiment run right, its conclusion drawn wrong: a tolerant or partial comparison,
    a sum, "did it change?", an answer from the names, an expected answer made on the device
    the same way (lost too), or a start of zeros that a lost mul_ leaves as they were."""

    def isolate_op(op, output_layout, input_layout):
        gen = torch.Generator().manual_seed(0)
        start = torch.zeros(6, 4) if flaw == "from zeros" else torch.randn(6, 4, generator=gen)
        a, b = torch.randn(6, 4, generator=gen), torch.rand(6, 4, generator=gen) + 0.5
        expected = start.clone()
        if flaw == "device expected":
            expected = laid_out(start, output_layout, emps.DEVICE)
            OP_CALLS[op](expected, a.to(emps.DEVICE), b.to(emps.DEVICE))
            expected = expected.cpu()
        else:
            OP_CALLS[op](expected, a, b)
        out = laid_out(start, output_layout, emps.DEVICE)
        OP_CALLS[op](out, *(laid_out(t, input_layout, emps.DEVICE) for t in (a, b)))
        got = out.cpu()
        same = {
            "allclose": lambda: torch.allclose(got, expected, atol=1e-2),
            "default allclose": lambda: torch.allclose(got, expected),
            "last row": lambda: torch.equal(got[-1], expected[-1]),
            "one element": lambda: bool(got[0, 0] == expected[0, 0]),
            "first row": lambda: torch.equal(got[0], expected[0]),
            "changed": lambda: not torch.equal(got, start),
            "sum": lambda: bool(got.sum() == expected.sum()),
            "names": lambda: out.is_contiguous() or op in ("lerp_", "mul_"),
        }.get(flaw, lambda: torch.equal(got, expected))()
        return "updates" if same else "lost"

    return isolate_op


def measured(op: str, tensors: tuple, output_layout: str, input_layout: str, place=None) -> str:
    """The experiment as a learner writes it: `op` on (start, a, b) in the layouts asked for,
    compared bit for bit with the same op on the CPU. Corpus answers and tests vary what it is
    given (which values, which shape, how tensors reach the device) instead of repeating it."""
    place = place or (lambda t, layout: laid_out(t, layout, emps.DEVICE))
    start, a, b = tensors
    expected = start.clone()
    OP_CALLS[op](expected, a, b)
    out = place(start, output_layout)
    OP_CALLS[op](out, *(place(t, input_layout) for t in (a, b)))
    return "updates" if torch.equal(out.cpu(), expected) else "lost"


def random_inputs(shape: tuple[int, ...], seed: int = 0, dtype=torch.float32) -> tuple:
    """start and a from a normal draw, b positive (addcdiv_ divides by it), privately seeded."""
    gen = torch.Generator().manual_seed(seed)
    start, a = (torch.randn(shape, generator=gen, dtype=dtype) for _ in range(2))
    return start, a, torch.rand(shape, generator=gen, dtype=dtype) + 0.5


def _isolate_on_ones():
    def isolate_op(op, output_layout, input_layout):  # all ones: lerp_ towards ones is a no-op
        ones = (torch.ones(6, 4), torch.ones(6, 4), torch.ones(6, 4))
        return measured(op, ones, output_layout, input_layout)

    return isolate_op


def _isolate_moved_to_the_device():
    def isolate_op(op, output_layout, input_layout):  # .to() of a sliced tensor is contiguous
        moved = lambda t, layout: laid_out(t, layout).to(emps.DEVICE)  # noqa: E731
        return measured(op, random_inputs((6, 4)), output_layout, input_layout, moved)

    return isolate_op


def _isolate_on_one_row():
    def isolate_op(op, output_layout, input_layout):  # "a small example": one row
        return measured(op, random_inputs((1, 4)), output_layout, input_layout)

    return isolate_op


def _isolate_cached():
    """The experiment run once per op and layouts, and remembered: a profile changed since
    is never seen."""
    return functools.cache(reference())


def _isolate_with_the_course():
    def isolate_op(op, output_layout, input_layout):
        found = op_isolation.isolate(op, output_layout, input_layout)
        return "updates" if found.verdict == "updates" else "lost"

    return isolate_op


def isolate_on(shape: tuple[int, ...], dtype: torch.dtype = torch.float32):
    """The reference experiment on tensors of another shape or dtype."""

    def isolate_op(op, output_layout, input_layout):
        return measured(op, random_inputs(shape, seed=2, dtype=dtype), output_layout, input_layout)

    return isolate_op


def _against_a_contiguous_run():
    """Another honest design: the expected answer from a contiguous output on the device."""

    def isolate_op(op, output_layout, input_layout):
        gen = torch.Generator().manual_seed(4)
        start, a, b = (torch.rand(5, 3, generator=gen) + 1 for _ in range(3))
        reference = laid_out(start, "contiguous", emps.DEVICE)
        OP_CALLS[op](reference, a.to(emps.DEVICE), b.to(emps.DEVICE))
        out = laid_out(start, output_layout, emps.DEVICE)
        OP_CALLS[op](out, *(laid_out(t, input_layout, emps.DEVICE) for t in (a, b)))
        return "updates" if torch.equal(out.cpu(), reference.cpu()) else "lost"

    return isolate_op


def _with(flaw: str, cause: str) -> tuple:
    return (lambda: isolate_with(flaw), cause)


def _comparing(flaw: str, cause: str) -> tuple:
    return (lambda: isolate_comparing(flaw), cause)


CORPORA = (
    Corpus(
        "03.isolate_op",
        reference,
        wrong={
            "the story's table": (_isolate_from_memory, "ran no lerp_ at all"),
            "run on the CPU": _with("cpu", "only on the CPU"),
            "into a contiguous copy": _with("contiguous copy", "never varied the output's layout"),
            "from zeros": _with("zeros", "started at zeros"),
            "layouts swapped": _with("swapped", "swapped"),
            "inputs always contiguous": _with("contiguous inputs", "never varied the inputs"),
            "sets the story's profile": _with(
                "story's profile", "ran on the 2.2.1-macos14 profile, not the one in force"
            ),
            "conclusion inverted": _with("inverted", "the other way round"),
            "the course's own experiment": (
                _isolate_with_the_course,
                "course.adam.op_isolation.isolate, the course's own experiment",
            ),
            "allclose with atol 1e-2": _comparing("allclose", "A tolerant comparison (allclose"),
            "out[0, 0] == expected[0, 0]": _comparing(
                "one element", "only part of the result arrived"
            ),
            "the first row compared": _comparing("first row", "only part of the result arrived"),
            "'did it change?' instead of 'is it the answer?'": _comparing(
                "changed", "only part of the result arrived"
            ),
            "sums compared": _comparing("sum", "from a sum or a mean"),
            "read from the names": _comparing("names", "read from the op's or the layout's name"),
            "expected answer made on the device, same layout": _comparing(
                "device expected", "a lost write is lost twice"
            ),
            "all ones": (_isolate_on_ones, "the op changes nothing"),
            ".to(device) of a laid-out tensor": (
                _isolate_moved_to_the_device,
                ".to(device) of a tensor with gaps",
            ),
            "(1, 4) tensors: 'transposed' stays contiguous": (
                _isolate_on_one_row,
                "Use at least 2 rows and 2 columns",
            ),
            "compared bitwise, from zeros: a lost mul_ leaves them": _comparing(
                "from zeros", "started at zeros"
            ),
            "torch.allclose's default tolerance": _comparing(
                "default allclose", "not with the CPU's bits"
            ),
            "the last row compared": _comparing("last row", "only part of the result arrived"),
            "functools.cache: the profile changed, the answer did not": (
                _isolate_cached,
                "a cache",
            ),
            "1-D tensors": (
                lambda: isolate_on((24,)),
                "a 1-D tensor laid out as asked stays contiguous",
            ),
            "float64, which the device refuses": (
                lambda: isolate_on((6, 4), torch.float64),
                "your experiment raised TypeError",
            ),
            "a word that is neither outcome": (
                lambda: lambda op, output_layout, input_layout: "unchanged",
                "'updates', 'lost'",
            ),
        },
        right={
            "expected from a contiguous run on the device": _against_a_contiguous_run,
            "(2, 2) tensors": lambda: isolate_on((2, 2)),
            "(3, 3) tensors": lambda: isolate_on((3, 3)),
            "3-D tensors: 'transposed' reverses every dim": lambda: isolate_on((2, 3, 4)),
            "4-D tensors": lambda: isolate_on((2, 2, 2, 3)),
        },
    ),
)
