"""03.which_ops and 03.isolate_op: each of Adam's ops alone, on profiles the learner never sees.

The checker watches how the experiment ran (`OpWatch`), not only what it concluded: an answer
from the story's table runs no op; an experiment on the CPU, into a contiguous copy, or with the
inputs always contiguous never measures what it claims; one that sets the story's profile
itself ignores the profile in force; the course's own experiment is recognised. Those causes are
named before a conclusion is compared, because they are what makes a conclusion wrong
somewhere. The hidden cases vary the op, both layouts and the profile, including backends
made for the check: only addcmul_ broken; macOS 15's strided buffers with both families listed
as broken (nothing is lost there: a profile's list is not a measurement); lerp_ broken (an
experiment on values the op leaves unchanged, all ones, cannot see it); lerp_ and mul_ broken
besides 2.2.1's two (a lost mul_ leaves an output of zeros as it was: a zero start cannot see
it); an addcdiv_ whose copy-back stops after the first row and a lerp_ whose copy-back starts
one row late (a comparison of one element or one row, or "did it change?", calls that an
update); and an addcmul_ whose result arrives a last bit off (a tolerant comparison calls that
an update).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch

from course import emps
from course.adam import op_isolation
from course.adam.exercises.common import EMULATED, OpCall, OpWatch
from course.adam.op_isolation import OP_CALLS, OPS
from course.emps.copies import copy_back, gather
from course.emps.mps_kernels import Kernel, KernelCall, write_through_placeholder
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    is_scaffold,
    passed,
    ready_made,
    register,
    register_prediction,
)
from course.layout.named import laid_out

OUTCOMES = ("updates", "lost")
READY_MADE_EXPERIMENTS = {  # the course's own experiment: it measures, on the story's profile only
    "course.adam.op_isolation.isolate": op_isolation.isolate,
    "course.adam.op_isolation.isolation_table": op_isolation.isolation_table,
}
# Profiles made for the checks: one family broken alone, and a list that is not what happens.
ONLY_ADDCMUL = emps.TORCH_2_2_1.with_broken({"addcmul"}, name="hidden-addcmul-only")
STRIDED_LISTED = emps.MACOS15.with_broken(emps.ADAM_FAMILIES, name="hidden-strided-listed")


def _computed_aside(call: KernelCall) -> torch.Tensor | None:
    """Gather and compute like a working kernel: the contiguous result of a non-contiguous
    output, for the kernel to copy back (None: a contiguous output was written directly)."""
    needs_copy = not call.output.is_contiguous()
    result = gather(call.output) if needs_copy else call.output
    call.temporaries += int(needs_copy)
    call.run_graph(call.placeholder(result), [call.placeholder(t) for t in call.inputs])
    return result if needs_copy else None


def first_row_copied_back(call: KernelCall) -> None:
    """A kernel made for the check: its copy-back stops after the output's first row, so
    the rest keeps its old values."""
    result = _computed_aside(call)
    if result is not None:
        copy_back(call.output[:1], result[:1])


def first_row_skipped(call: KernelCall) -> None:
    """A kernel made for the check: its copy-back starts one row late (the first row keeps
    its old values), so a comparison of the last row, or "did it change?", sees an update."""
    result = _computed_aside(call)
    if result is not None:
        copy_back(call.output[1:], result[1:])


def last_bit_off(call: KernelCall) -> None:
    """A kernel made for the check: every element is written, each one float32 step (one
    ulp) above the CPU's answer, as a kernel that rounds differently would: the CPU's bits
    never arrive, and a tolerant comparison (allclose) takes that for an update."""
    result = _computed_aside(call)
    if result is not None:
        copy_back(call.output, torch.nextafter(result, torch.full_like(result, torch.inf)))


def _made_for_the_check(name: str, label: str) -> emps.Profile:
    return replace(emps.TORCH_2_4, name=name, label=label, description=label)


LERP_LOST = _made_for_the_check("hidden-lerp-lost", "a backend made for this check (lerp_ broken)")
FIRST_ROW = _made_for_the_check(
    "hidden-first-row", "a backend made for this check (a partial copy-back)"
)
ROW_SKIPPED = _made_for_the_check(
    "hidden-row-skipped", "a backend made for this check (a copy-back that starts late)"
)
ROUNDED = _made_for_the_check(
    "hidden-rounded", "a backend made for this check (a result rounded differently)"
)
# 2.2.1's two broken kernels, and lerp_'s and mul_'s too: a profile (not kernel overrides),
# so that on_profile runs it as well (03.lost_ops)
SEVERAL_LOST = replace(
    _made_for_the_check(
        "hidden-several-lost", "a backend made for this check (several kernels broken)"
    ),
    broken=emps.TORCH_2_2_1.broken | {"lerp", "mul"},
)
HIDDEN_KERNELS: dict[str, dict[str, Kernel]] = {
    LERP_LOST.name: {"lerp": write_through_placeholder},
    FIRST_ROW.name: {"addcdiv": first_row_copied_back},
    ROW_SKIPPED.name: {"lerp": first_row_skipped},
    ROUNDED.name: {"addcmul": last_bit_off},
}


def backend(profile: emps.Profile) -> emps.Backend:
    """The backend a case runs on: the profile, with any kernels made for the check."""
    return emps.Backend(profile, overrides=HIDDEN_KERNELS.get(profile.name, {}))


@dataclass(frozen=True)
class Isolation:
    """One hidden op-isolation case: a profile, an op, and the two layouts."""

    profile: emps.Profile
    op: str
    output_layout: str
    input_layout: str = "contiguous"

    @property
    def what(self) -> str:
        """The case in words (the profile by its label: the learner chose none of it)."""
        return (
            f"{self.op} with a {self.output_layout} output and {self.input_layout} inputs, "
            f"on {self.profile.label}"
        )


ISOLATIONS = (
    *(Isolation(emps.TORCH_2_2_1, op, "transposed") for op in OPS),
    Isolation(emps.TORCH_2_2_1, "addcmul_", "contiguous", "transposed"),
    Isolation(emps.TORCH_2_2_1, "addcdiv_", "step-sliced"),
    Isolation(emps.TORCH_2_2_1, "addcmul_", "storage-offset"),
    Isolation(emps.TORCH_2_2_1, "lerp_", "contiguous", "step-sliced"),
    Isolation(emps.TORCH_2_2_1, "mul_", "step-sliced", "transposed"),
    Isolation(emps.TORCH_2_2_1, "addcdiv_", "transposed", "step-sliced"),
    Isolation(emps.TORCH_2_4, "addcmul_", "transposed"),
    Isolation(emps.FIXED_MACOS14, "addcdiv_", "transposed"),
    Isolation(emps.MACOS15, "addcdiv_", "step-sliced"),
    Isolation(ONLY_ADDCMUL, "addcdiv_", "transposed"),
    Isolation(STRIDED_LISTED, "addcmul_", "transposed", "transposed"),
    Isolation(LERP_LOST, "lerp_", "transposed"),
    Isolation(FIRST_ROW, "addcdiv_", "transposed"),
    Isolation(ROW_SKIPPED, "lerp_", "step-sliced"),
    Isolation(ROUNDED, "addcmul_", "transposed"),
    Isolation(SEVERAL_LOST, "mul_", "transposed"),
    Isolation(SEVERAL_LOST, "lerp_", "contiguous", "transposed"),
)


def measure(fn: Callable, profile: emps.Profile, *args) -> tuple[object, OpWatch, list[str]]:
    """Run the learner's experiment with `profile` in force: its answer, its op calls, and the
    ready-made experiments it called."""
    setting = emps.use_backend(backend(profile))
    with setting, ready_made(READY_MADE_EXPERIMENTS) as used, OpWatch() as watch:
        got = fn(*args)
    return got, watch, used


@functools.cache
def _expected_isolation(index: int) -> str:
    case = ISOLATIONS[index]
    return measure(reference_isolate_op(), case.profile, *_args(case))[0]


def _args(case: Isolation) -> tuple[str, str, str]:
    return case.op, case.output_layout, case.input_layout


def course_experiment(used: list[str]) -> Verdict | None:
    """The course's own experiment called inside the learner's: named, whatever it answered."""
    if not used:
        return None
    return failed(
        f"your function called {used[0]}, the course's own experiment: it runs on the story's "
        "profile whatever profile is in force, and tests nothing you wrote. Write the "
        "experiment: lay out the tensors, run OP_CALLS[op] on the emulated device, compare."
    )


def _check_isolate_op(fn: Callable) -> Verdict:
    if not callable(fn):
        return failed("pass your function isolate_op(op, output_layout, input_layout)")
    for index, case in enumerate(ISOLATIONS):
        try:
            got, watch, used = measure(fn, case.profile, *_args(case))
        except Exception as error:
            if is_scaffold(error):
                raise
            return failed(f"for {case.what} your experiment raised {type(error).__name__}: {error}")
        verdict = course_experiment(used) or _outcome_word(got, case)
        verdict = verdict or how_it_ran(watch, case) or _conclusion(got, index, watch)
        if verdict is not None:
            return verdict
    return passed(
        f"right on {len(ISOLATIONS)} hidden cases, each measured: on the 2.2.1 profile addcmul_ "
        "and addcdiv_ lose their result when their *output* is non-contiguous, whatever the "
        "inputs; lerp_ and mul_ always update."
    )


def _outcome_word(got: object, case: Isolation) -> Verdict | None:
    if isinstance(got, str) and got in OUTCOMES:
        return None
    return failed(f"return one of {OUTCOMES}; for {case.what} you returned {got!r}")


def _names(layouts: frozenset[str]) -> str:
    return " and ".join(sorted(layouts)) or "none of the case layouts"


def how_it_ran(watch: OpWatch, case: Isolation) -> Verdict | None:
    """What the experiment did wrong, seen from its op calls, before its answer is compared."""
    runs = watch.runs(case.op)
    if not runs:
        return failed(
            f"for {case.what} your function ran no {case.op} at all: an answer from the "
            "story's table, from a profile's name or its list of broken families, from the "
            "layout's name, or remembered from an earlier call (a cache, a dict of results) "
            "is not a measurement, and a profile you have not seen shows it. "
            "Run the op and look at what arrives."
        )
    on_device = watch.runs(case.op, EMULATED)
    if not on_device:
        return failed(
            f"for {case.what} your function ran {case.op} only on the CPU, where no write is "
            "ever lost: run it on the emulated device (laid_out(values, layout, emps.DEVICE)) "
            "and use the CPU for the expected answer"
        )
    in_force = [r for r in on_device if r.profile == case.profile.name]
    if not in_force:
        return failed(
            f"for {case.what} your {case.op} ran on the {on_device[0].profile} profile, not the "
            "one in force: isolate_op measures whatever profile is active (the checker and "
            "on_profile choose it), so don't set one inside it"
        )
    return _layout_verdict(in_force, case)


def _layout_verdict(runs: list[OpCall], case: Isolation) -> Verdict | None:
    if any(r.laid_out_as(case.output_layout, case.input_layout) for r in runs):
        return None
    shaped = [r for r in runs if case.output_layout in r.output]
    if not shaped:
        first = runs[0]
        swapped = case.output_layout != case.input_layout and case.input_layout in first.output
        if swapped and all(case.output_layout in i for i in first.inputs):
            cause = "you laid out the output as the inputs' layout (swapped?)"
        elif len(first.shape) < 2:
            cause = (
                f"your tensors are {first.shape}: a 1-D tensor laid out as asked stays "
                "contiguous (one dim has one order), so the experiment never varied the "
                "output's layout. Use at least 2 rows and 2 columns"
            )
        elif 1 in first.shape:
            cause = (
                f"your tensors are {first.shape}: with a size-1 dim, laid out as asked, the "
                "output did not get the layout the case is about (the checker sees it as "
                f"{_names(first.output)}), so the experiment never varied it. Use at least 2 "
                "rows and 2 columns"
            )
        else:
            cause = (
                "a copy (.contiguous(), .clone(memory_format=...), .to(device) of a tensor "
                "with gaps) or a fresh tensor is not the tensor the case asks about: the "
                "experiment never varied the output's layout"
            )
        return failed(
            f"for {case.what} the output your {case.op} wrote into was {_names(first.output)}, "
            f"not {case.output_layout}: {cause}. Write into "
            "laid_out(start, output_layout, emps.DEVICE) itself."
        )
    inputs = sorted({_names(i) for i in shaped[0].inputs})
    return failed(
        f"for {case.what} your {case.op}'s inputs were {', '.join(inputs)}, not "
        f"{case.input_layout}: the experiment never varied the inputs, so it cannot say they "
        "don't matter. Lay out the inputs with input_layout."
    )


def _conclusion(got: str, index: int, watch: OpWatch) -> Verdict | None:
    want = _expected_isolation(index)
    if got == want:
        return None
    case = ISOLATIONS[index]
    runs = [r for r in watch.runs(case.op, EMULATED) if r.laid_out_as(*_args(case)[1:])]
    arrives = "is lost" if want == "lost" else "arrives"
    return failed(
        f"for {case.what} the op's result {arrives}, and your experiment said {got!r}: "
        f"{_why(got, runs)}",
        got,
        want,
    )


def _why(got: str, runs: list[OpCall]) -> str:
    """What the watched runs say about a wrong conclusion, from the most telling fact."""
    if all(r.from_zeros for r in runs):
        return (
            "your output started at zeros, and an op that writes zeros (mul_ of 0, say) cannot "
            "be told from one that writes nothing. Start from non-zero values"
        )
    if not any(r.changes for r in runs):
        return (
            "on your values the op changes nothing (lerp_ towards the values it starts from, "
            "all ones, say), so a write and a lost write look alike. Choose values the op "
            "changes: random ones"
        )
    arrived = {r.arrived for r in runs}
    if got == "updates" and "part" in arrived:
        return (
            "only part of the result arrived (some rows kept their start values): a "
            "comparison of one element, one row, or 'did it change?' calls that an update. "
            "'updates' means the whole output holds the CPU's answer: "
            "torch.equal(out.cpu(), expected)"
        )
    if got == "updates" and "off" in arrived:
        return (
            "every element was written, but not with the CPU's bits (each one a last bit "
            "off, as a kernel that rounds differently writes it). A tolerant comparison "
            "(allclose, a bound on the difference) calls that an update; 'updates' means the "
            "CPU's answer bit for bit: torch.equal(out.cpu(), expected)"
        )
    if got == "updates" and len(runs) > 1:
        return (
            "your output still holds its start values, and so does your expected answer: you "
            "ran the op the same way twice (on the device, into the same layout), and a lost "
            "write is lost twice. Take the expected answer from the CPU"
        )
    if got == "updates":
        return (
            "your output still holds its start values. A tolerant comparison (allclose: these "
            "ops move values by about 1e-3) or one the other way round calls that an update; "
            "compare bitwise, torch.equal(out.cpu(), expected)"
        )
    if arrived == {"all"}:
        return (
            "the output holds the CPU's answer to the bit. Is your conclusion the other way "
            "round, read from the op's or the layout's name instead of your comparison, or "
            "from a sum or a mean (a transposed tensor adds in another order, so its sum can "
            "differ in the last bit)? Return what torch.equal of the tensors says"
        )
    return (
        "your experiment ran as asked, so is its conclusion the other way round? 'updates' "
        "means the output holds the CPU's answer, compared bitwise (torch.equal on out.cpu()); "
        "'lost' means it does not"
    )


def reference_isolate_op():
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


# ---- wrong answers a learner writes ----------------------------------------------------------


def _isolate_from_memory():
    def isolate_op(op, output_layout, input_layout):  # the story's table, not a measurement
        broken = op in ("addcmul_", "addcdiv_")
        return "lost" if broken and output_layout != "contiguous" else "updates"

    return isolate_op


def _isolate_with(flaw: str):
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


def _isolate_comparing(flaw: str):
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


def _measured(op: str, tensors: tuple, output_layout: str, input_layout: str, place=None) -> str:
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


def _random_inputs(shape: tuple[int, ...], seed: int = 0, dtype=torch.float32) -> tuple:
    """start and a from a normal draw, b positive (addcdiv_ divides by it), privately seeded."""
    gen = torch.Generator().manual_seed(seed)
    start, a = (torch.randn(shape, generator=gen, dtype=dtype) for _ in range(2))
    return start, a, torch.rand(shape, generator=gen, dtype=dtype) + 0.5


def _isolate_on_ones():
    def isolate_op(op, output_layout, input_layout):  # all ones: lerp_ towards ones is a no-op
        ones = (torch.ones(6, 4), torch.ones(6, 4), torch.ones(6, 4))
        return _measured(op, ones, output_layout, input_layout)

    return isolate_op


def _isolate_moved_to_the_device():
    def isolate_op(op, output_layout, input_layout):  # .to() of a sliced tensor is contiguous
        moved = lambda t, layout: laid_out(t, layout).to(emps.DEVICE)  # noqa: E731
        return _measured(op, _random_inputs((6, 4)), output_layout, input_layout, moved)

    return isolate_op


def _isolate_on_one_row():
    def isolate_op(op, output_layout, input_layout):  # "a small example": one row
        return _measured(op, _random_inputs((1, 4)), output_layout, input_layout)

    return isolate_op


def _isolate_cached():
    """The experiment run once per op and layouts, and remembered: a profile changed since
    is never seen."""
    return functools.cache(reference_isolate_op())


def _isolate_with_the_course():
    def isolate_op(op, output_layout, input_layout):
        found = op_isolation.isolate(op, output_layout, input_layout)
        return "updates" if found.verdict == "updates" else "lost"

    return isolate_op


register(
    Exercise(
        name="03.isolate_op",
        prompt="Write isolate_op(op, output_layout, input_layout) -> 'updates' or 'lost': run "
        "one of Adam's ops once on the emulated device, with the output and the inputs in the "
        "layouts named, and say whether its result arrived.",
        checker=_check_isolate_op,
        hint="Start the output at non-zero values, lay out output and inputs with "
        "laid_out(values, layout, emps.DEVICE), run OP_CALLS[op](out, a, b), and compare "
        "out.cpu() bitwise with the same op run on plain CPU tensors.",
        reference=reference_isolate_op,
        wrong_answers=(
            _isolate_from_memory,
            lambda: _isolate_with("cpu"),
            lambda: _isolate_with("contiguous copy"),
            lambda: _isolate_with("zeros"),
            lambda: _isolate_with("swapped"),
            lambda: _isolate_with("contiguous inputs"),
            lambda: _isolate_with("story's profile"),
            lambda: _isolate_with("inverted"),
            _isolate_with_the_course,
            lambda: _isolate_comparing("allclose"),
            lambda: _isolate_comparing("one element"),
            lambda: _isolate_comparing("first row"),
            lambda: _isolate_comparing("changed"),
            lambda: _isolate_comparing("sum"),
            lambda: _isolate_comparing("names"),
            lambda: _isolate_comparing("device expected"),
            _isolate_on_ones,
            _isolate_moved_to_the_device,
            _isolate_on_one_row,
            lambda: _isolate_comparing("from zeros"),
            lambda: _isolate_comparing("default allclose"),
            lambda: _isolate_comparing("last row"),
            _isolate_cached,
        ),
    )
)


def _which_ops() -> str:
    isolate_op = reference_isolate_op()
    lost = tuple(op for op in OPS if isolate_op(op, "transposed", "contiguous") == "lost")
    names = {(): "none", OPS: "all four", ("lerp_", "mul_"): "lerp_ and mul_"}
    return names.get(lost, " and ".join(lost))


register_prediction(
    Prediction(
        "03.which_ops",
        "On the story's profile, which of Adam's four in-place ops lose their result when their "
        "output is non-contiguous?",
        ("all four", "lerp_ and mul_", "addcmul_ and addcdiv_", "none"),
        _which_ops,
        "addcmul_ and addcdiv_: exactly the op that writes exp_avg_sq (so it stays 0) and the "
        "op that writes the parameter (so it never moves). lerp_ and mul_ are fine: the bug is "
        "in two kernels, not in non-contiguous tensors as such.",
        answer_words=("stays exactly 0", "never moves"),
    )
)
