"""Notebooks 06-07's exercises: the Placeholder fix and the scramble, run on the emulated device."""

from __future__ import annotations

from collections.abc import Callable

import torch

from course import emps
from course.exercises import Exercise, Verdict, failed, passed, register
from course.kernels.cpp.kernels import naive_model
from course.kernels.placeholder_lab import CHECK_STEPS, layouts, private_backend, run_addcmul
from course.story import plateau

# ---- exercise 06.fix_addcmul -------------------------------------------------------------


def check_kernel_layouts(kernel: Callable[[emps.KernelCall], None]) -> Verdict | None:
    """Compare the kernel with torch.addcmul on every layout; a failed Verdict or None."""
    for layout, output in layouts().items():
        result, expected, _ = run_addcmul(kernel, output)
        if torch.allclose(result, expected, atol=1e-6):
            continue
        if torch.equal(result, output):
            return failed(
                f"on a {layout} output (stride {tuple(output.stride())}) your kernel's "
                "result never reached the output: it still holds its old values",
                _first(result),
                _first(expected),
            )
        return failed(
            f"on a {layout} output (stride {tuple(output.stride())}) your kernel wrote "
            "wrong values",
            _first(result),
            _first(expected),
        )
    return None


def _first(t: torch.Tensor) -> str:
    return str([round(v, 4) for v in t.flatten()[:4].tolist()]) + " ..."


def check_fix(kernel) -> Verdict:
    """The checker: right on every layout, then the plateau experiment trains the encoder."""
    if not callable(kernel):
        return failed(
            "the answer must be a kernel function, `def my_kernel(call): ...`",
            type(kernel).__name__,
            "a function taking a KernelCall",
        )
    verdict = check_kernel_layouts(kernel)
    if verdict is not None:
        return verdict
    trained = plateau.run(backend=private_backend(kernel), steps=CHECK_STEPS, progress=None)
    summary = trained.summary()
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
        f"right on every layout, and the plateau run trains: encoder moved by "
        f"{summary['encoder_max_change']:.3g}, its max exp_avg_sq is "
        f"{summary['encoder_max_exp_avg_sq']:.3g} (was exactly 0)"
    )


def _reference():
    def my_kernel(call):
        output = call.output
        if not output.is_contiguous():
            output = output.contiguous()  # a temporary the graph can write into
        inputs = [call.placeholder(t) for t in call.inputs]
        call.run_graph(call.placeholder(output), inputs)
        if output is not call.output:
            call.output.copy_(output)  # scatter the result back into the real output

    return my_kernel


def _buggy():
    def my_kernel(call):
        inputs = [call.placeholder(t) for t in call.inputs]
        call.run_graph(call.placeholder(call.output), inputs)

    return my_kernel


def _zeros():
    def my_kernel(call):
        call.output.zero_()

    return my_kernel


def _no_copy_back():
    def my_kernel(call):
        output = call.output.contiguous()
        call.run_graph(call.placeholder(output), [call.placeholder(t) for t in call.inputs])

    return my_kernel


register(
    Exercise(
        name="06.fix_addcmul",
        prompt="Write `my_kernel(call)`, a fixed addcmul_ kernel: its result must reach "
        "`call.output` whatever the output's layout. It is installed into a private buggy "
        "backend and the plateau experiment is rerun.",
        checker=check_fix,
        hint="Copy the working pattern: if call.output is not contiguous, make a contiguous "
        "temporary, run the graph into call.placeholder(temporary), then "
        "call.output.copy_(temporary).",
        reference=_reference,
        wrong_answers=(_buggy, _zeros, _no_copy_back),
    )
)


# ---- exercise 06.predict_scramble --------------------------------------------------------


def scramble_case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The exercise's inputs: a zero transposed (2, 3) output, t1 = 0..5, t2 = ones."""
    return torch.zeros(3, 2).t(), torch.arange(6.0).reshape(2, 3), torch.ones(2, 3)


def check_scramble(answer) -> Verdict:
    """The checker: the naive kernel's result, as a nested list."""
    out, t1, t2 = scramble_case()
    expected = naive_model(out, t1, t2).tolist()
    correct = torch.addcmul(out, t1, t2).tolist()
    try:
        yours = torch.as_tensor(answer, dtype=torch.float32).tolist()
    except (TypeError, ValueError, RuntimeError):
        return failed("answer with a nested list of 2 rows of 3 numbers", answer, expected)
    if yours == expected:
        return passed(
            "right: the values 0..5 were written in memory order, and a transposed "
            "output reads memory column by column"
        )
    if yours == correct:
        return failed(
            "that is torch's (correct) answer; the naive kernel writes element i of "
            "t1 to memory slot i of the output, and reads nothing about strides",
            yours,
            expected,
        )
    return failed(
        "not what the naive kernel writes: follow memory slot i of each tensor", yours, expected
    )


def _scramble_reference():
    # memory slot i gets i; out[r][c] sits in slot r + 2 * c
    return [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]


register(
    Exercise(
        name="07.predict_scramble",
        prompt="out = torch.zeros(3, 2).t() (shape (2, 3), stride (1, 2)); "
        "t1 = arange(6).reshape(2, 3); t2 = ones. What does the naive kernel leave in "
        "out.tolist()?",
        checker=check_scramble,
        hint="Memory slot i of out gets t1's memory slot i (= i). Logical out[r][c] lives at "
        "memory slot r * 1 + c * 2.",
        reference=_scramble_reference,
        wrong_answers=(
            lambda: [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]],
            lambda: [[0.0, 3.0], [1.0, 4.0]],
        ),
    )
)
