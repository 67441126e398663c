"""03.which_ops and 03.isolate_op: each of Adam's ops alone, on profiles the learner never sees.

The checker watches how the experiment ran (`OpWatch`), not only what it concluded: an answer
from the story's table runs no op; one on the CPU, into a contiguous copy, or with the inputs
always contiguous never measures what it claims; one that sets the story's profile itself
ignores the profile in force; the course's own experiment is recognised. Those causes come
before a conclusion is compared. The hidden cases vary the op, both layouts and the profile,
with backends made for the check, each one what a wrong experiment cannot see: addcmul_ broken
alone; macOS 15 listing both families as broken (a list is not a measurement); lerp_ broken
(values it leaves unchanged cannot see it); lerp_ and mul_ broken too (a zero start cannot see a
lost mul_); copy-backs that write only part of the output, or every element a last bit off
(one element, one row, "did it change?" or a tolerant comparison call those an update).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from course import emps
from course.adam.exercises import common
from course.adam.exercises.common import EMULATED, OpCall, OpWatch, arrives, course_experiment
from course.adam.op_isolation import OPS
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    is_scaffold,
    passed,
    register,
    register_prediction,
)

OUTCOMES = ("updates", "lost")


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
    Isolation(common.ONLY_ADDCMUL, "addcdiv_", "transposed"),
    Isolation(common.STRIDED_LISTED, "addcmul_", "transposed", "transposed"),
    Isolation(common.LERP_LOST, "lerp_", "transposed"),
    Isolation(common.FIRST_ROW, "addcdiv_", "transposed"),
    Isolation(common.ROW_SKIPPED, "lerp_", "step-sliced"),
    Isolation(common.ROUNDED, "addcmul_", "transposed"),
    Isolation(common.SEVERAL_LOST, "mul_", "transposed"),
    Isolation(common.SEVERAL_LOST, "lerp_", "contiguous", "transposed"),
)


@functools.cache
def expected_isolation(index: int) -> str:
    case = ISOLATIONS[index]
    with emps.use_backend(common.backend(case.profile)):
        return arrives(case.op, case.output_layout, case.input_layout)


def _check_isolate_op(fn: Callable) -> Verdict:
    if not callable(fn):
        return failed("pass your function isolate_op(op, output_layout, input_layout)")
    for index, case in enumerate(ISOLATIONS):
        try:
            got, watch, used = common.measure(fn, case.profile, case.op, *_layouts(case))
        except Exception as error:
            if is_scaffold(error):
                raise
            return failed(f"for {case.what} your experiment raised {type(error).__name__}: {error}")
        verdict = (
            course_experiment(used)
            or _outcome_word(got, case)
            or how_it_ran(watch, case)
            or _conclusion(got, index, watch)
        )
        if verdict is not None:
            return verdict
    return passed(
        f"right on {len(ISOLATIONS)} hidden cases, each measured: on the 2.2.1 profile addcmul_ "
        "and addcdiv_ lose their result when their *output* is non-contiguous, whatever the "
        "inputs; lerp_ and mul_ always update."
    )


def _layouts(case: Isolation) -> tuple[str, str]:
    return case.output_layout, case.input_layout


def _outcome_word(got: object, case: Isolation) -> Verdict | None:
    if isinstance(got, str) and got in OUTCOMES:
        return None
    return failed(f"return one of {OUTCOMES}; for {case.what} you returned {got!r}")


def _names(layouts: frozenset[str]) -> str:
    return " and ".join(sorted(layouts)) or "none of the case layouts"


def how_it_ran(watch: OpWatch, case: Isolation) -> Verdict | None:
    """What the experiment did wrong, seen from its op calls, before its answer is compared."""
    on_device = watch.runs(case.op, EMULATED)
    in_force = [r for r in on_device if r.profile == case.profile.name]
    if not watch.runs(case.op):
        cause = (
            f"function ran no {case.op} at all: an answer from the story's table, from a "
            "profile's name or its list of broken families, from the layout's name, or "
            "remembered from an earlier call (a cache, a dict of results) is not a measurement, "
            "and a profile you have not seen shows it. Run the op and look at what arrives."
        )
    elif not on_device:
        cause = (
            f"function ran {case.op} only on the CPU, where no write is ever lost: run it on the "
            "emulated device (laid_out(values, layout, emps.DEVICE)) and use the CPU for the "
            "expected answer"
        )
    elif not in_force:
        cause = (
            f"{case.op} ran on the {on_device[0].profile} profile, not the one in force: "
            "isolate_op measures whatever profile is active (the checker and on_profile choose "
            "it), so don't set one inside it"
        )
    else:
        return _layout_verdict(in_force, case)
    return failed(f"for {case.what} your {cause}")


def _layout_verdict(runs: list[OpCall], case: Isolation) -> Verdict | None:
    if any(r.laid_out_as(*_layouts(case)) for r in runs):
        return None
    shaped = [r for r in runs if case.output_layout in r.output]
    if shaped:
        inputs = sorted({_names(i) for i in shaped[0].inputs})
        return failed(
            f"for {case.what} your {case.op}'s inputs were {', '.join(inputs)}, not "
            f"{case.input_layout}: the experiment never varied the inputs, so it cannot say "
            "they don't matter. Lay out the inputs with input_layout."
        )
    first = runs[0]
    swapped = case.output_layout != case.input_layout and case.input_layout in first.output
    if swapped and all(case.output_layout in i for i in first.inputs):
        cause = "you laid out the output as the inputs' layout (swapped?)"
    elif len(first.shape) < 2:
        cause = (
            f"your tensors are {first.shape}: a 1-D tensor laid out as asked stays contiguous "
            "(one dim has one order), so the experiment never varied the output's layout. Use "
            "at least 2 rows and 2 columns"
        )
    elif 1 in first.shape:
        cause = (
            f"your tensors are {first.shape}: with a size-1 dim, laid out as asked, the output "
            "did not get the layout the case is about (the checker sees it as "
            f"{_names(first.output)}), so the experiment never varied it. Use at least 2 rows "
            "and 2 columns"
        )
    else:
        cause = (
            "a copy (.contiguous(), .clone(memory_format=...), .to(device) of a tensor with "
            "gaps) or a fresh tensor is not the tensor the case asks about: the experiment "
            "never varied the output's layout"
        )
    return failed(
        f"for {case.what} the output your {case.op} wrote into was {_names(first.output)}, "
        f"not {case.output_layout}: {cause}. Write into "
        "laid_out(start, output_layout, emps.DEVICE) itself."
    )


def _conclusion(got: str, index: int, watch: OpWatch) -> Verdict | None:
    want = expected_isolation(index)
    if got == want:
        return None
    case = ISOLATIONS[index]
    runs = [r for r in watch.runs(case.op, EMULATED) if r.laid_out_as(*_layouts(case))]
    arrives_or_not = "is lost" if want == "lost" else "arrives"
    return failed(
        f"for {case.what} the op's result {arrives_or_not}, and your experiment said {got!r}: "
        f"{_why(got, runs)}",
        got,
        want,
    )


BITWISE = "torch.equal(out.cpu(), expected)"


def _why(got: str, runs: list[OpCall]) -> str:
    """What the watched runs say about a wrong conclusion, from the most telling fact."""
    arrived = {r.arrived for r in runs}
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
    if got == "updates" and "part" in arrived:
        return (
            "only part of the result arrived (some rows kept their start values): a "
            "comparison of one element, one row, or 'did it change?' calls that an update. "
            f"'updates' means the whole output holds the CPU's answer: {BITWISE}"
        )
    if got == "updates" and "off" in arrived:
        return (
            "every element was written, but not with the CPU's bits (each one a last bit "
            "off, as a kernel that rounds differently writes it). A tolerant comparison "
            "(allclose, a bound on the difference) calls that an update; 'updates' means the "
            f"CPU's answer bit for bit: {BITWISE}"
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
            f"compare bitwise, {BITWISE}"
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
        minutes=15,
    )
)


def _which_ops() -> str:
    with emps.use_profile(emps.TORCH_2_2_1):
        lost = tuple(op for op in OPS if arrives(op, "transposed", "contiguous") == "lost")
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
