"""Reading a learner's answers: an op's name, a condition's name, and a patch's verdict.

A learner types the culprit op the way they met it: `lerp_`, `aten::lerp_`, `lerp_.Scalar`,
`torch.Tensor.lerp_`, or just `lerp`; or as the foreach op that runs it on a list,
`torch._foreach_lerp_`. All name the in-place op. `torch.lerp` and `aten::lerp`
name the out-of-place function, which is not the culprit: on the device a function that returns
a new tensor never goes through the kernels that write an existing one, so `op_name` explains
that instead of accepting it. Anything off the list is a "not yet" with the list, never a
traceback.
"""

from __future__ import annotations

from course.errors import CourseError
from course.exercises import Verdict, failed, passed
from course.mystery.conditions import CONDITIONS, condition_name
from course.mystery.scenarios import ScenarioReport
from course.mystery.symptoms import observe

# The in-place ops a culprit may be: every one the auditor accepts (course.audit.core.discover
# finds them all; tests/mystery checks), the ones the scenarios run and a few more.
OPS = (
    "add_",
    "addcdiv_",
    "addcmul_",
    "clamp_",
    "div_",
    "lerp_",
    "masked_fill_",
    "mul_",
    "normal_",
    "relu_",
    "sigmoid_",
    "sqrt_",
    "sub_",
    "tanh_",
    "uniform_",
)
_METHOD_PREFIXES = ("torch.Tensor.", "Tensor.", "tensor.", "x.")
_FUNCTION_PREFIXES = ("torch.nn.functional.", "nn.functional.", "F.", "torch.", "aten::")
# the optimizers' multi-tensor ops run their op's kernel once per tensor: torch._foreach_lerp_
# names lerp_ (what a learner of a foreach case sees in the recorder and in their repro)
_FOREACH = "_foreach_"


class NotAnAnswer(CourseError):
    """An answer the checker cannot judge, with what to give instead (shown as NOT YET)."""


def op_name(op: object) -> str:
    """The in-place op a learner named, e.g. "lerp_"; NotAnAnswer saying why if none."""
    if not isinstance(op, str) or not op.strip():
        raise NotAnAnswer(f"op={op!r}: give the op's name as a string, e.g. 'mul_'")
    text = op.strip().removesuffix("()")
    method = text.startswith(_METHOD_PREFIXES)
    function = not method and text.startswith(_FUNCTION_PREFIXES)
    for prefix in (*_METHOD_PREFIXES, *_FUNCTION_PREFIXES):
        text = text.removeprefix(prefix)
    text = text.removeprefix(_FOREACH)
    base, _, overload = text.partition(".")
    in_place = base if base.endswith("_") else f"{base}_"
    if in_place not in OPS:
        raise NotAnAnswer(f"op={op!r} is not one of the suspects; choose one of: {', '.join(OPS)}")
    if not base.endswith("_") and (method or function) and overload != "out":
        raise NotAnAnswer(
            f"{op!r} is the out-of-place function: it returns a new tensor, and on this device "
            "a call that makes a new tensor never goes through the kernels that write an existing "
            f"one. The culprit is an in-place op, such as {in_place}, that writes a tensor the "
            "model already has."
        )
    return in_place


_JOINS = ("+", ",", "&", " and ")  # how a learner writes two conditions in one string


def condition(answer: object) -> frozenset[str]:
    """The condition a learner named, in the course's spelling: one, or two that must hold at
    once (a pair written "large+unaligned", "large and unaligned" or ("large", "unaligned"));
    NotAnAnswer listing the choices if not."""
    names: object = answer
    if isinstance(answer, str):
        text = answer
        for join in _JOINS:
            text = text.replace(join, "+")
        names = [part for part in text.split("+") if part.strip()] or [answer]
    if not isinstance(names, (list, tuple, set, frozenset)) or not 1 <= len(names) <= 2:
        raise NotAnAnswer(
            f"condition={answer!r}: give one condition, or two that must hold at once, e.g. "
            "'transposed' or ('step-sliced', 'repeat-call')"
        )
    found = {name: condition_name(name) for name in names}
    unknown = [name for name, spelled in found.items() if spelled is None]
    if unknown:
        raise NotAnAnswer(
            f"condition={unknown[0]!r} is not one of the choices; case.conditions() lists them: "
            f"{', '.join(CONDITIONS)}"
        )
    return frozenset(found.values())


def judge_fix(report: ScenarioReport, healthy: ScenarioReport, fired: int) -> Verdict:
    """Does a patched run on the buggy device train like the CPU run, without the trigger?"""
    mine = f"final loss {report.final_loss:.4g}, held-out {report.metric:.4g}"
    theirs = f"final loss {healthy.final_loss:.4g}, held-out {healthy.metric:.4g}"
    if fired:
        return failed(
            f"during training with your patch the planted kernel still met its condition {fired} "
            "times: a fix removes what triggers the bug, not only its symptom",
            mine,
            theirs,
        )
    findings = observe(report, healthy)
    if findings:
        return failed(
            f"with your patch, on the case's device: {findings[0].sentence}",
            mine,
            theirs,
        )
    return passed("the scenario trains on the case's device as on the CPU; the trigger is gone")
