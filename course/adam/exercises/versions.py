"""03.lost_ops: which ops lose their result on a profile, measured, on profiles never shown.

The text after this exercise builds on what the learner measures here, so the measurement is
checked: each profile is handed in while *another* one is in force, and the watch sees whether
all four ops ran, on the emulated device, under the profile asked about, into a transposed
output with contiguous inputs. A set written down, remembered, or read from the profile (its
name, label or list of broken families) is named, and three profiles made for the check make
such sets wrong: addcmul_ broken alone, macOS 15 listing both families while nothing is lost,
and lerp_ and mul_ lost too (wrong for the story's pair, and for a start of zeros).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from course import emps
from course.adam.exercises.common import (
    EMULATED,
    ONLY_ADDCMUL,
    SEVERAL_LOST,
    STRIDED_LISTED,
    OpWatch,
    arrives,
    course_experiment,
    measure,
)
from course.adam.op_isolation import OPS
from course.errors import CourseError
from course.exercises import Exercise, Verdict, failed, passed, register

PROFILES = (*emps.PROFILES.values(), ONLY_ADDCMUL, STRIDED_LISTED, SEVERAL_LOST)


def _in_force(profile: emps.Profile) -> emps.Profile:
    """The profile active while the learner's function is asked about `profile`: another one,
    so that measuring "whatever is active" instead of `profile` gives a wrong set."""
    return emps.FIXED_MACOS14 if profile is emps.TORCH_2_2_1 else emps.TORCH_2_2_1


@functools.cache
def expected(index: int) -> frozenset[str]:
    """The truth: the ops whose write into a transposed output is lost on the profile."""
    with emps.use_profile(PROFILES[index]):
        return frozenset(op for op in OPS if arrives(op, "transposed", "contiguous") == "lost")


def _check_lost_ops(fn: Callable) -> Verdict:
    if not callable(fn):
        return failed("pass your function lost_ops(profile)")
    try:
        runs = [measure(fn, _in_force(p), p) for p in PROFILES]
    except CourseError as error:
        hidden = [p.name for p in PROFILES if p.name in str(error) and p.name not in emps.PROFILES]
        if not hidden:
            raise
        return failed(
            f"your function looked up the profile {hidden[0]!r} by name, and a profile made "
            "for this check has no registered name: pass the profile you were given itself, "
            "on_profile(profile, isolate_op, ...)"
        )
    for got, _, used in runs:
        verdict = course_experiment(used) or _a_set_of_ops(got)
        if verdict is not None:
            return verdict
    answers = [frozenset(got) for got, _, _ in runs]
    for index, (profile, (_, watch, _)) in enumerate(zip(PROFILES, runs, strict=True)):
        verdict = _how_it_ran(watch, profile, answers) or _conclusion(answers[index], index, watch)
        if verdict is not None:
            return verdict
    return passed(
        f"measured right on {len(PROFILES)} profiles, three of them made for this check: the "
        "writes are lost on PyTorch 2.2.1 only; 2.4 fixed both kernels, and on macOS 15 "
        "nothing is lost, whatever a profile's list says."
    )


def _a_set_of_ops(got: object) -> Verdict | None:
    if isinstance(got, dict):
        return failed(
            "your function returned a dict; return the set of op names whose result is lost, "
            "e.g. {'mul_'} (or set() when none is)",
            type(got).__name__,
            "a set of op names",
        )
    if not isinstance(got, set | frozenset | list | tuple):
        return failed(
            f"return a set of op names, not {type(got).__name__} {got!r}",
            type(got).__name__,
            "a set",
        )
    unknown = [op for op in got if op not in OPS]
    if unknown:
        return failed(f"{unknown[0]!r} is not one of OPS {OPS}: return op names from OPS")
    return None


def _how_it_ran(
    watch: OpWatch, profile: emps.Profile, answers: list[frozenset[str]]
) -> Verdict | None:
    on_device = [c for c in watch.calls if c.device == EMULATED]
    if not on_device and any(c.op in OPS for c in watch.calls):
        return failed(
            f"asked about {profile.label}, your ops ran only on the CPU, where no write is ever "
            "lost: your isolate_op must run them on the emulated device (check 03.isolate_op "
            "first)"
        )
    if not on_device:
        return _not_measured(profile, answers)
    asked = [c for c in on_device if c.profile == profile.name]
    if not asked:
        return failed(
            f"asked about {profile.label}, your ops ran on the {on_device[0].profile} profile, "
            "the one in force: run your experiment on the profile you were given, "
            "on_profile(profile, isolate_op, ...)"
        )
    for op in OPS:
        runs = [c for c in asked if c.op == op]
        if not runs:
            return failed(
                f"asked about {profile.label}, your function never measured {op}: the question "
                "is about all four ops, and an op you do not run cannot be cleared"
            )
        if not any("transposed" in c.output for c in runs):
            yours = " and ".join(sorted(runs[0].output)) or "another layout"
            return failed(
                f"asked about {profile.label}, your {op} never wrote into a transposed output "
                f"(yours: {yours}): the writes in question are those into a non-contiguous "
                "output, isolate_op(op, 'transposed', 'contiguous')"
            )
        if not any(c.laid_out_as("transposed", "contiguous") for c in runs):
            return failed(
                f"asked about {profile.label}, your {op} wrote into a transposed output but "
                "never with contiguous inputs: change one thing at a time, the output's layout "
                "alone, isolate_op(op, 'transposed', 'contiguous'). With both changed, a lost "
                "write could come from either"
            )
    return None


def _not_measured(profile: emps.Profile, answers: list[frozenset[str]]) -> Verdict:
    if len(set(answers)) == 1:
        cause = (
            f"you returned {sorted(answers[0])} on every profile: a set written down (the one "
            "printed above?) answers for the story's profile only"
        )
    else:
        cause = (
            "your sets change with the profile, read from it (its name, its label, its list of "
            "broken families) or remembered from an earlier run (a dict of results, a cache) "
            "instead of measured now: on two profiles made for this check, such a set is wrong"
        )
    return failed(
        f"asked about {profile.label}, your function ran no op on the emulated device: {cause}. "
        "Measure it now, for each op: your isolate_op, run with on_profile so that `profile` is in "
        "force, on the layout the prompt names."
    )


def _conclusion(got: frozenset[str], index: int, watch: OpWatch) -> Verdict | None:
    want = expected(index)
    if got == want:
        return None
    profile = PROFILES[index]
    asked = [
        c
        for c in watch.calls
        if c.profile == profile.name and c.laid_out_as("transposed", "contiguous")
    ]
    measured_lost = sorted({c.op for c in asked if c.arrived != "all"} - got)
    measured_arrived = sorted(
        op for op in got - want if all(c.arrived == "all" for c in asked if c.op == op)
    )
    from_zeros = sorted(op for op in want - got if all(c.from_zeros for c in asked if c.op == op))
    if got == frozenset(OPS) - want:
        cause = "those are the ops that update: return the ops whose result is lost"
    elif measured_lost:
        cause = (
            f"your own runs of {', '.join(measured_lost)} left the CPU's answer out of the "
            "output, yet your set leaves them out: keep every op your measurement finds lost, "
            "not only the story's suspects"
        )
    elif measured_arrived:
        cause = (
            f"your own runs of {', '.join(measured_arrived)} found the CPU's answer in the "
            "output, yet your set names them: keep the ops your measurement finds lost on this "
            "profile, not the story's pair"
        )
    elif from_zeros:
        cause = (
            f"your {from_zeros[0]} wrote into an output of zeros, and where its result is lost "
            "the zeros it leaves look like a write of zeros: start from non-zero values "
            "(03.isolate_op)"
        )
    else:
        cause = "your experiment ran as asked, so check your isolate_op (03.isolate_op) first"
    return failed(
        f"asked about {profile.label}, your set is wrong: {cause}", sorted(got), sorted(want)
    )


register(
    Exercise(
        name="03.lost_ops",
        prompt="Write lost_ops(profile) -> set: the ops among OPS whose result is lost when "
        "their output is transposed (inputs contiguous), measured with your isolate_op on "
        "`profile`.",
        checker=_check_lost_ops,
        hint="on_profile runs any experiment (your isolate_op, with the arguments that follow "
        "it) with a profile in force; ask it, op by op, about a transposed output and "
        "contiguous inputs, and keep the ops for which it says 'lost'.",
        minutes=5,
    )
)
