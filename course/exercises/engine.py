"""The checking engine, written once: run an answer on hidden cases, watch it, order diagnoses.

A checker is data (`Checking`): the hidden cases, how to run the learner's answer on one, what
the truth is there, how to compare, and the ordered diagnoses that name the cause of a miss.
The engine runs the answer on every case (a case it raises on is a miss like any other, never a
traceback), notes every ready-made helper the answer called to answer for it, and asks the
diagnoses in order: the first that recognises its mistake in the trials speaks; when none does,
the first miss is shown as it is. Lesson 04's `Rule`/`judge` is this engine with layouts as the
cases and torch as the truth.

Why ordered diagnoses over the whole set of trials, not per case: a mistake is best read from
the pattern (right on every case of two dims, wrong on three; right on the default variant only;
the same answer whatever a parameter is), and the order puts what makes a conclusion wrong
(a borrowed answer, a wrong form) before what it concluded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from course.exercises.blanks import is_scaffold
from course.exercises.verdicts import Verdict, failed, not_attempted, passed
from course.exercises.watch import ready_made


@dataclass(frozen=True)
class Trial:
    """One hidden case, and what the learner's answer did on it."""

    case: Any
    label: str
    expected: Any
    got: Any = None
    error: BaseException | None = None
    used: tuple[str, ...] = ()  # the ready-made helpers it called, in call order
    agrees: bool = False

    @property
    def missed(self) -> bool:
        return not self.agrees


Finding = Verdict | str | None
Diagnosis = Callable[[list[Trial]], Finding]


def each(test: Callable[[Trial], Finding]) -> Diagnosis:
    """A diagnosis asked of every missed trial in case order; it speaks on the first it fires
    on, prefixed with that case's label so the learner knows which variant showed it."""

    def diagnose(trials: list[Trial]) -> Finding:
        for trial in (t for t in trials if t.missed):
            finding = test(trial)
            if isinstance(finding, str):
                return f"on {trial.label}: {finding}"
            if finding is not None:
                return finding
        return None

    return diagnose


def first_miss(trials: list[Trial]) -> Verdict:
    """The fallback: the first case the answer got wrong, yours beside the truth."""
    miss = next(t for t in trials if t.missed)
    if miss.error is not None:
        return failed(
            f"on {miss.label} your answer raised {type(miss.error).__name__}: {miss.error}"
        )
    return failed(f"on {miss.label} your answer disagrees", miss.got, miss.expected)


@dataclass(frozen=True)
class Checking:
    """A checker as data. `run(answer, case)` gives what the answer says on a case, `expect(case)`
    the truth, `agree(got, expected)` whether they match; `form(answer)` is asked first (a
    function where a value was asked, a value of the wrong kind); `ready_made` names helpers
    that would answer for the learner; `diagnoses` are asked in order on the trials of a miss;
    `success(n)` is the passing message after n hidden cases."""

    cases: Callable[[], Sequence[Any]]
    run: Callable[[Any, Any], Any]
    expect: Callable[[Any], Any]
    success: Callable[[int], str]
    agree: Callable[[Any, Any], bool] = lambda got, expected: bool(got == expected)
    label: Callable[[Any], str] = str
    form: Callable[[Any], Verdict | None] = lambda answer: None
    ready_made: Mapping[str, Callable] = field(default_factory=dict)
    borrowed: Callable[[tuple[str, ...]], Verdict] | None = None
    diagnoses: tuple[Diagnosis, ...] = ()

    def __call__(self, answer: Any) -> Verdict:
        verdict = self.form(answer)
        if verdict is not None:
            return verdict
        trials = [self.trial(answer, case) for case in self.cases()]
        if any(is_scaffold(t.error) for t in trials if t.error is not None):
            return not_attempted("your function still raises NotImplementedError.")
        used = tuple(dict.fromkeys(name for t in trials for name in t.used))
        if used:
            return self.borrowed(used) if self.borrowed else _borrowed(used)
        if all(t.agrees for t in trials):
            return passed(self.success(len(trials)))
        return self.diagnose(trials)

    def trial(self, answer: Any, case: Any) -> Trial:
        """Run the answer on one case, watched; an exception is the answer's, kept in the trial."""
        expected = self.expect(case)
        got, error = None, None
        with ready_made(self.ready_made) as used:
            try:
                got = self.run(answer, case)
            except Exception as exc:  # the learner's code failing on a hidden case: a miss
                error = exc
        agrees = error is None and _agree(self.agree, got, expected)
        return Trial(case, self.label(case), expected, got, error, tuple(used), agrees)

    def diagnose(self, trials: list[Trial]) -> Verdict:
        for diagnosis in self.diagnoses:
            finding = diagnosis(trials)
            if isinstance(finding, str):
                return failed(finding)
            if finding is not None:
                return finding
        return first_miss(trials)


def _agree(agree: Callable[[Any, Any], bool], got: Any, expected: Any) -> bool:
    try:
        return bool(agree(got, expected))
    except Exception:  # an answer of a kind the comparison cannot take: it does not agree
        return False


def _borrowed(used: tuple[str, ...]) -> Verdict:
    return failed(
        f"your answer called {', '.join(used)}, which computes the answer for you: it agrees "
        "with the checker because it is the checker's own truth. Write it yourself."
    )
