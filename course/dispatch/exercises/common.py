"""What notebook 05's checkers share on top of the engine (course.exercises.engine).

The course's readers (`backend_kernel`, `call_path`) are the checkers' truth: an answer that
calls one agrees everywhere and teaches nothing, so the engine watches for them and
`reader_used` names the call. A wrong answer is read across every variant, because the pattern
says more than one failure: each checker runs models of the classic mistakes on the same
variants, and `closest_model` picks the one the learner's answers follow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from course.exercises import Verdict, failed
from course.exercises.engine import Trial


@dataclass(frozen=True)
class Answer:
    """What a function did on one variant: a value, or the exception it raised."""

    value: object = None
    error: BaseException | None = None

    @classmethod
    def of(cls, trial: Trial) -> Answer:
        return cls(trial.got, trial.error)

    @property
    def shown(self) -> str:
        if self.error is None:
            return repr(self.value)
        return f"raised {type(self.error).__name__}: {first_line(self.error)}"

    def same_as(self, other: Answer) -> bool:
        """Equal values, or the same kind of exception (how a model of a mistake is matched)."""
        if self.error is not None or other.error is not None:
            return type(self.error) is type(other.error)
        return self.value == other.value


def first_line(exc: BaseException) -> str:
    """An exception's first line, without opcheck's pointer to a stack trace nobody sees."""
    text = str(exc).split(" (scroll up")[0].strip()
    return text.splitlines()[0] if text else ""


def attempt(fn: Callable, *args: object) -> Answer:
    """Call a mistake model, keeping an exception as its answer."""
    try:
        return Answer(fn(*args))
    except Exception as exc:  # a model of a wrong rule fails where the rule would
        return Answer(error=exc)


def a_function(example: str) -> Callable[[object], Verdict | None]:
    """The engine's `form`: anything but a function is told to be one, with an example."""
    return lambda answer: (
        None if callable(answer) else failed(f"give a function, e.g. {example}", answer)
    )


def reader_used(title: str, instead: str) -> Callable[[tuple[str, ...]], Verdict]:
    """The engine's `borrowed`: the feedback for an answer that called the course's reader."""
    return lambda used: failed(
        f"{title} called {used[0]}, the course's own reader: it is what the checker compares "
        f"with, so it agrees everywhere and tests nothing you wrote. {instead}"
    )


def closest_model(
    modelled: Sequence[Sequence[Answer]], answers: Sequence[Answer], index: int
) -> int | None:
    """The index of the mistake model (modelled[m][v]: model m's answer on variant v) that
    gives the learner's answer on variant `index` and agrees with it on the most variants, or
    None: one wrong variant may fit several models, the whole run tells them apart."""
    best, best_score = None, -1
    for m, model in enumerate(modelled):
        if not model[index].same_as(answers[index]):
            continue
        score = sum(a.same_as(b) for a, b in zip(model, answers, strict=True))
        if score > best_score:
            best, best_score = m, score
    return best
