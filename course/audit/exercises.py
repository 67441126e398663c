"""Notebook 08's exercises, checked by running the learner's answer on hidden cases."""

from __future__ import annotations

import torch

from course.audit.core import LAYOUTS, audit
from course.audit.report import flagged_ops
from course.exercises import Exercise, Prediction, Verdict, failed, passed, register
from course.exercises import register_prediction as register_choice

# --- 08.broken_on_2_4 ----------------------------------------------------------------------------


def _audit_2_4():
    return audit("emulated:2.4-macos14", layouts=["transposed"], dtypes=["float32"])


def _check_broken_set(answer) -> Verdict:
    if isinstance(answer, str) or not isinstance(answer, (set, frozenset, list, tuple)):
        return failed(
            f"give a set of op names such as {{'aten::mul_'}}, not {type(answer).__name__} "
            f"{answer!r}",
            repr(answer),
            "a set of names",
        )
    expected = flagged_ops(_audit_2_4())
    yours = {a if str(a).startswith("aten::") else f"aten::{a}" for a in answer}
    if yours == expected:
        return passed("exactly the ops the auditor flags on the 2.4 profile: the random ops")
    missing, extra = expected - yours, sorted(yours - expected)
    why = (
        (f"{len(missing)} op(s) that lose writes on 2.4 are missing" if missing else "")
        + ("; " if missing and extra else "")
        + (f"not broken on 2.4: {extra}" if extra else "")
    )
    return failed(why, sorted(yours), f"{len(expected)} ops, no overload names")


def _reference_broken_set():
    results = audit("emulated:2.4-macos14", layouts=["transposed"], dtypes=["float32"])
    return {r.op.split(".")[0] for r in results if r.verdict in ("silent-no-write", "wrong-values")}


register(
    Exercise(
        "08.broken_on_2_4",
        "Run the auditor on the emulated 2.4 profile and give the set of ops that lose writes "
        "(names like 'aten::normal_', overloads dropped).",
        _check_broken_set,
        "audit('emulated:2.4-macos14', layouts=['transposed'], dtypes=['float32']) returns "
        "results; keep those whose verdict is a bug and drop the overload after the '.'.",
        _reference_broken_set,
        (
            lambda: {"aten::addcmul_", "aten::addcdiv_"},
            lambda: {
                "aten::addcmul_",
                "aten::addcdiv_",
                "aten::normal_",
                "aten::uniform_",
                "aten::exponential_",
                "aten::random_",
                "aten::bernoulli_",
            },
            lambda: {"aten::normal_", "aten::uniform_"},
            lambda: "normal_",
        ),
    )
)


# --- 08.verdict ----------------------------------------------------------------------------------


def _verdict_cases() -> dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor, str]]:
    """label -> (before, after, expected, the right verdict): the hidden outputs to judge."""
    values = torch.arange(1.0, 13.0).reshape(3, 4).T  # non-contiguous, non-zero
    doubled = values * 2
    poison = torch.full((4, 3), float("nan"))
    sample = torch.linspace(0.1, 0.9, 12).reshape(4, 3)
    ramp = torch.linspace(-2.0, 2.0, 12).reshape(4, 3)
    clamped = ramp.clamp(-1, 1)  # the middle elements legitimately stay as they were
    logs = ramp.log()  # NaN for the negative inputs: the right answer contains NaN
    return {
        "an output the op never wrote": (values, values.clone(), doubled, "silent-no-write"),
        "an output overwritten with zeros": (
            values,
            torch.zeros_like(values),
            doubled,
            "wrong-values",
        ),
        "a correctly written output": (values, doubled.clone(), doubled, "ok"),
        "an output written only where its values exceed 6": (
            values,
            torch.where(values > 6, doubled, values),
            doubled,
            "wrong-values",
        ),
        "a NaN-poisoned output the op never wrote": (
            poison,
            poison.clone(),
            sample,
            "silent-no-write",
        ),
        "a NaN-poisoned output written correctly": (poison, sample.clone(), sample, "ok"),
        "clamp_ written correctly (in-range elements stay put)": (
            ramp,
            clamped.clone(),
            clamped,
            "ok",
        ),
        "clamp_ never written": (ramp, ramp.clone(), clamped, "silent-no-write"),
        "log_ written correctly (NaN for negative inputs)": (ramp, logs.clone(), logs, "ok"),
    }


def _check_verdict(fn) -> Verdict:
    for label, (before, after, expected, want) in _verdict_cases().items():
        got = fn(before.clone(), after.clone(), expected.clone())
        if got != want:
            return failed(f"for {label} your function says {got!r}", got, want)
    return passed("you tell 'wrote nothing' from 'wrote the wrong thing', with NaN poison too")


def _reference_verdict():
    def verdict(before, after, expected):
        if torch.allclose(after, expected, equal_nan=True):
            return "ok"
        unchanged = (after == before) | (after.isnan() & before.isnan())
        if unchanged.all():
            return "silent-no-write"
        return "wrong-values"

    return verdict


def _zeros_mean_nothing():
    def verdict(before, after, expected):
        if not after.any():
            return "silent-no-write"
        return "ok" if torch.allclose(after, expected) else "wrong-values"

    return verdict


def _nan_unaware():
    def verdict(before, after, expected):
        if torch.allclose(after, expected, equal_nan=True):
            return "ok"
        return "silent-no-write" if (after == before).all() else "wrong-values"

    return verdict


def _any_unchanged_first():
    def verdict(before, after, expected):
        same = (after == before) | (after.isnan() & before.isnan())
        if same.any():
            return "silent-no-write"
        return "ok" if torch.allclose(after, expected, equal_nan=True) else "wrong-values"

    return verdict


def _nan_in_the_answer():
    def verdict(before, after, expected):
        if torch.allclose(after, expected):
            return "ok"
        unchanged = (after == before) | (after.isnan() & before.isnan())
        return "silent-no-write" if unchanged.all() else "wrong-values"

    return verdict


register(
    Exercise(
        "08.verdict",
        "Write verdict(before, after, expected) -> 'ok' | 'silent-no-write' | 'wrong-values' for "
        "one output of a deterministic op (before: what the output held before the call, maybe "
        "a NaN poison).",
        _check_verdict,
        "Compare `after` with `expected` first; only then ask whether *every* element still "
        "holds its old value. NaN == NaN is False, so both comparisons must treat NaN specially.",
        _reference_verdict,
        (
            _zeros_mean_nothing,
            lambda: (
                lambda before, after, expected: (
                    "ok" if torch.equal(after, expected) else "silent-no-write"
                )
            ),
            _nan_unaware,
            _any_unchanged_first,
            _nan_in_the_answer,
        ),
    )
)


# --- 08.which_layouts (a prediction) -------------------------------------------------------------

NON_CONTIGUOUS_OUTPUTS = {
    "transposed",
    "step-sliced",
    "permuted",
    "channels-last",
    "out=transposed",
}
LAYOUT_CHOICES = (
    "only transposed",
    "every non-contiguous output",
    "every layout",
    "none",
    "some other mix",
)


def _which_layouts() -> str:
    results = audit("emulated:2.2.1-macos14", ops="addcmul_", dtypes="float32")
    flagged = {r.layout for r in results if r.flagged}
    named = {
        frozenset(): "none",
        frozenset({"transposed"}): "only transposed",
        frozenset(NON_CONTIGUOUS_OUTPUTS): "every non-contiguous output",
        frozenset(LAYOUTS): "every layout",
    }
    return named.get(frozenset(flagged), "some other mix")


register_choice(
    Prediction(
        "08.which_layouts",
        f"On the 2.2.1 profile, which of the audit's layouts ({', '.join(LAYOUTS)}) lose "
        "addcmul_'s result?",
        LAYOUT_CHOICES,
        _which_layouts,
        "The Placeholder copies any output that is not contiguous (transposed, step-sliced,\n"
        "permuted, channels_last, and a non-contiguous out= tensor), and the copy is dropped.\n"
        "A storage offset leaves the output contiguous, and expanded (stride-0) tensors are\n"
        "only ever inputs, which the Placeholder copies correctly: those layouts are fine.",
    )
)
