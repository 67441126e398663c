"""What notebook 05's checkers share: the learner's function run on every hidden variant and
watched, so that the course's own reader passed (or called) as the answer is named.

The course's readers (`backend_kernel`, `call_path`) compute the exercises' answers: they are
what the checkers compare with. A function that calls one agrees everywhere and teaches
nothing, so each checker runs the learner's function under lesson 04's watch
(course.layout.exercises.common.watched) and names such a call before it compares anything.
Every variant's answer is collected first, because the pattern across variants (the same
answer everywhere, one mistaken rule reproduced on all of them) says more than one failure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from course.exercises import Verdict, failed, is_scaffold
from course.layout.exercises.common import Borrowed, watched


@dataclass(frozen=True)
class Answer:
    """What the learner's function did on one variant: a value, or the exception it raised."""

    value: object = None
    error: BaseException | None = None

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
    """Call `fn`, keeping an exception as the answer (the scaffold's own is re-raised)."""
    try:
        return Answer(fn(*args))
    except Exception as exc:
        if is_scaffold(exc):
            raise
        return Answer(error=exc)


def answers_watched(
    fn: Callable, variants: Iterable[tuple], keys: Mapping[str, str]
) -> tuple[list[Answer], list[str]]:
    """`fn`'s answer on each variant's arguments, and the answer keys (course functions named
    in `keys`, by their dotted name) it called, or was."""
    borrowed = Borrowed()
    run = watched(fn, borrowed)
    answers = [attempt(run, *args) for args in variants]
    return answers, [keys[name] for name in borrowed.course if name in keys]


def answer_key_verdict(title: str, used: list[str], instead: str) -> Verdict | None:
    """The feedback for an answer that called the course's own reader, or None."""
    if not used:
        return None
    return failed(
        f"{title} called {used[0]}, the course's own reader: it is what the checker compares "
        f"with, so it agrees everywhere and tests nothing you wrote. {instead}"
    )


def closest_model(modelled: Sequence[Sequence[Answer]], answers: Sequence[Answer], index: int):
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
