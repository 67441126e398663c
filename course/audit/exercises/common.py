"""What notebook 08's two judges share: running the learner's judge on hidden outputs.

`08.verdict` and `08.random_verdict` both hand the learner's function one hidden output at a
time (`VerdictCase`), stop at the first wrong verdict and say what is true of that output, so
the feedback names the shortcut without printing the answer; a judge that calls the auditor's
own is told so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from course.audit import judge
from course.exercises import Verdict, failed, is_scaffold, passed, ready_made


@dataclass(frozen=True)
class VerdictCase:
    """One hidden output to judge (what it held before the call, after it, and the right answer
    or a correct sample), the right verdict, and what is true of it (the feedback)."""

    tensors: tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # before, after, expected
    want: str
    why: str | dict[str, str]  # what is true of it, or per wrong verdict when that differs

    def feedback(self, got: str) -> str:
        """What is true of this output, told to a judge that said `got`."""
        return self.why if isinstance(self.why, str) else self.why[got]


# The auditor's own judging, which these exercises ask the learner to write
_COURSE_JUDGES = {
    "course.audit.judge.judge": judge.judge,
    "course.audit.judge.unchanged": judge.unchanged,
    "course.audit.judge.close": judge.close,
}


def judged(fn: Callable, cases: dict[str, VerdictCase], done: str) -> Verdict:
    """Run a learner's judge on every hidden output; stop at the first wrong verdict."""
    for label, case in cases.items():
        with ready_made(_COURSE_JUDGES) as borrowed:
            try:
                got = fn(*(tensor.clone() for tensor in case.tensors))
            except Exception as exc:
                if is_scaffold(exc):
                    raise
                return failed(f"for {label} your function raised {type(exc).__name__}: {exc}")
        if borrowed:
            return failed(
                f"for {label} your function called the auditor's own {borrowed[0]}: telling "
                "'nothing written' from 'written wrong' is what this exercise asks. Write the "
                "comparisons yourself, NaN-aware"
            )
        if got not in ("ok", "silent-no-write", "wrong-values"):
            return failed(
                f"for {label} your function returned {got!r}: return 'ok', 'silent-no-write' "
                "or 'wrong-values'"
            )
        if got != case.want:
            return failed(
                f"for {label} your judge says {got!r}: {case.feedback(got)}", got, case.want
            )
    return passed(f"right on {len(cases)} hidden outputs: {done}")
