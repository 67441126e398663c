"""Notebook 08's exercises, checked by running the learner's answer on the emulated profiles."""

from __future__ import annotations

import torch

from course.audit.core import audit
from course.audit.report import flagged_ops
from course.exercises import Exercise, failed, passed, register

# --- exercises ---------------------------------------------------------------------------------


def _check_broken_set(answer) -> object:
    expected = flagged_ops(audit("emulated:2.4-macos14", layouts=["transposed"]))
    yours = {a if str(a).startswith("aten::") else f"aten::{a}" for a in answer}
    if yours == expected:
        return passed("exactly the ops the auditor flags on the 2.4 profile: the random ops")
    missing, extra = sorted(expected - yours), sorted(yours - expected)
    why = (
        (f"missing {missing}" if missing else "")
        + ("; " if missing and extra else "")
        + (f"not broken on 2.4: {extra}" if extra else "")
    )
    return failed(why, sorted(yours), sorted(expected))


def _reference_broken_set():
    results = audit("emulated:2.4-macos14", layouts=["transposed"])
    return {r.op.split(".")[0] for r in results if r.verdict in ("silent-no-write", "wrong-values")}


register(
    Exercise(
        "08.broken_on_2_4",
        "Run the auditor on the emulated 2.4 profile and give the set of ops that lose writes "
        "(names like 'aten::normal_', overloads dropped).",
        _check_broken_set,
        "audit('emulated:2.4-macos14', layouts=['transposed']) returns results; keep those whose "
        "verdict is a bug and drop the overload after the '.'.",
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
        ),
    )
)


def _check_verdict(fn) -> object:
    before = torch.arange(1.0, 13.0).reshape(3, 4).T  # non-contiguous, non-zero "poison"
    expected = before * 2
    cases = {
        "unchanged output": (before.clone(), "silent-no-write"),
        "zeros written": (torch.zeros_like(before), "wrong-values"),
        "correct values": (expected.clone(), "ok"),
        "half written": (torch.where(before > 6, expected, before), "wrong-values"),
    }
    for label, (after, want) in cases.items():
        got = fn(before, after, expected)
        if got != want:
            return failed(f"for {label} your function says {got!r}", got, want)
    return passed("you tell 'wrote nothing' from 'wrote the wrong thing', zeros included")


def _reference_verdict():
    def verdict(before, after, expected):
        if torch.allclose(after, expected):
            return "ok"
        if torch.equal(after, before):
            return "silent-no-write"
        return "wrong-values"

    return verdict


register(
    Exercise(
        "08.verdict",
        "Write verdict(before, after, expected) -> 'ok' | 'silent-no-write' | 'wrong-values' for a "
        "deterministic in-place op (before: the output's values before the call).",
        _check_verdict,
        "Compare `after` with `expected` first, then with `before`. An output of zeros is a write.",
        _reference_verdict,
        (
            lambda: (
                lambda before, after, expected: (
                    "silent-no-write"
                    if not after.any()
                    else ("ok" if torch.allclose(after, expected) else "wrong-values")
                )
            ),
            lambda: (
                lambda before, after, expected: (
                    "ok" if torch.equal(after, expected) else "silent-no-write"
                )
            ),
        ),
    )
)
