"""Auto-checked exercises: a checker that says precisely what is wrong, a hint, then a solution.

Every exercise in the course is an `Exercise` (`registry`) registered by the module that teaches
its concept, found through its lesson (`04.address` loads lesson 04's checks, nothing else). A
learner's cell calls `check(name, answer)`; after a miss it suggests the hint, spelled as a line
that runs in any cell (`from course.exercises import hint; hint(...)`), because a notebook need
not have imported `hint`. Only after the hint does `solution(name)` reveal the reference, read
from the lesson's reference notebook (`solutions`): instructors skip the gate with
`COURSE_INSTRUCTOR=1` or `instructor_mode(True)`. `hint` and `solution` display their text as well
as returning it, so a cell that calls both shows both. Every check, hint, solution and prediction
is saved to the learner's journal (`course.journal`), which `python -m course progress` and
notebook 00 summarise.

A checker is mostly data: hidden cases, what to run on each, ordered diagnoses (`engine`). The
wrong answers each checker must refuse, with the words its feedback must hold, live in tests/.
A learner copy's blanks are "not attempted yet" and never journaled (`blanks`).
"""

from __future__ import annotations

import os
from typing import Any

from course import journal
from course.errors import CourseError
from course.exercises import grading, registry, solutions
from course.exercises.blanks import (
    SCAFFOLD,
    blank,
    blank_error,
    is_scaffold,
    untouched,
    watched_for_scaffold,
)
from course.exercises.registry import (
    Exercise,
    Prediction,
    all_exercises,
    all_predictions,
    get,
    register,
    register_prediction,
)
from course.exercises.verdicts import (
    NOT_ATTEMPTED,
    TEXT_WIDTH,
    Shown,
    Text,
    Verdict,
    failed,
    not_attempted,
    passed,
    wrapped,
)
from course.exercises.watch import ready_made

__all__ = [
    "NOT_ATTEMPTED",
    "SCAFFOLD",
    "TEXT_WIDTH",
    "Exercise",
    "Prediction",
    "Shown",
    "Text",
    "Verdict",
    "advice",
    "all_exercises",
    "all_predictions",
    "blank",
    "blank_error",
    "check",
    "committed",
    "failed",
    "get",
    "hint",
    "instructor_mode",
    "is_scaffold",
    "not_attempted",
    "passed",
    "predict",
    "ready_made",
    "register",
    "register_prediction",
    "reveal",
    "reveal_all",
    "solution",
    "untouched",
    "wrapped",
]

_HINTS_SEEN: set[str] = set()
_SOLUTIONS_SHOWN: set[str] = set()  # in this session: a pass after it scores less when graded
_INSTRUCTOR = {"on": os.environ.get("COURSE_INSTRUCTOR", "") not in ("", "0")}
_PREDICTED: dict[str, str] = {}


def advice(function: str, name: str) -> str:
    """A line that runs in any cell, whatever the notebook imported: the import, then the call."""
    return f"from course.exercises import {function}; {function}({name!r})"


def _none_answer() -> Verdict:
    """None is an answer, and a common wrong one: say where it comes from."""
    return failed(
        "your answer is None: what a function that prints its result instead of returning it "
        "gives, or a call that returns nothing (an in-place method, print). Hand in the value "
        "itself"
    )


def _run_checker(exercise: Exercise, answer: Any) -> Verdict:
    """The checker's verdict; a crash, or the learner's function raising the scaffold, told."""
    answer, raised_scaffold = watched_for_scaffold(answer)
    try:
        verdict = exercise.checker(answer)
    except Exception as exc:
        verdict = blank_error(exc) or failed(
            f"checking your answer raised {type(exc).__name__}: {exc}"
        )
    if raised_scaffold():
        verdict = not_attempted("your function still raises NotImplementedError.")
    return verdict


def check(name: str, answer: Any) -> Verdict | grading.Score:
    """Check a learner's answer and save the result to the journal; never raises on the answer.

    A blank answer (see `untouched`) is "not attempted yet" and is not saved: the journal holds
    only what the learner really tried. Under the instructor's autograder (`grading`) the
    verdict is printed and the points earned are returned, for nbgrader to read."""
    exercise = get(name)
    verdict = blank(answer)
    if verdict is None:
        verdict = _none_answer() if answer is None else _run_checker(exercise, answer)
    if grading.grading():  # the instructor's machine: score it, keep no journal of it
        print(verdict)
        shown = name in _SOLUTIONS_SHOWN or grading.submitted_journal_shows(name)
        return grading.score(verdict.passed, exercise.minutes, shown)
    if verdict.attempted:
        journal.record(name, "check", passed=verdict.passed)
        if not verdict.passed and not _hint_seen(name) and not _INSTRUCTOR["on"]:
            verdict.message += f"\n  stuck? run:  {advice('hint', name)}"
    return verdict


def _hint_seen(name: str) -> bool:
    """This session, or (from the journal) an earlier one: a restarted kernel keeps the unlock."""
    if name not in _HINTS_SEEN and journal.hint_seen(name):
        _HINTS_SEEN.add(name)
    return name in _HINTS_SEEN


def hint(name: str) -> Text:
    """Show the hint for an exercise (and return its text), and unlock its solution."""
    exercise = get(name)
    _HINTS_SEEN.add(name)
    journal.record(name, "hint")
    return Shown(
        f"Hint for {name}: {exercise.hint}\n  still stuck? run:  {advice('solution', name)}"
    )


def solution(name: str) -> Text:
    """Show the reference solution (and return it), once the hint has been seen."""
    get(name)
    if not _hint_seen(name) and not _INSTRUCTOR["on"]:
        return Shown(f"Try the hint first, then the solution. Run:  {advice('hint', name)}")
    try:
        text = solutions.find(name).text
    except CourseError as error:
        return Shown(f"No solution to show for {name}: {error}")
    journal.record(name, "solution")
    _SOLUTIONS_SHOWN.add(name)
    return Shown(f"Reference solution for {name}:\n\n{text}")


def committed(name: str) -> str | None:
    """The choice the learner committed to for a prediction, in this kernel or an earlier one."""
    if name not in _PREDICTED:
        earlier = journal.prediction(name)
        if earlier is not None:
            _PREDICTED[name] = earlier
    return _PREDICTED.get(name)


def predict(name: str, choice: object) -> Text | Verdict:
    """Commit to a prediction before running the experiment; `reveal(name)` compares later.

    A prediction is made once: it is saved with the journal, and a later different choice
    (after a restart, or after the reveal) is refused, politely. A choice that is not on the
    list is a NOT YET message naming the choices, never a traceback."""
    prediction = registry.prediction(name)
    if choice is Ellipsis or choice is None:
        return Text(
            wrapped(f"No prediction yet: {prediction.question} Choose one of {prediction.choices}.")
        )
    if not isinstance(choice, str) or choice not in prediction.choices:
        return Verdict(
            False,
            wrapped(f"{choice!r} is not one of the choices for {name}: copy one of them exactly."),
            repr(choice),
            "one of " + ", ".join(repr(c) for c in prediction.choices),
            attempted=False,
        )
    earlier = committed(name)
    if earlier is not None and earlier != choice:
        return Text(
            wrapped(
                f"You already committed to {earlier!r} for {name}, and a prediction is made "
                f"once, before the experiment. Keep {earlier!r}: reveal({name!r}) compares it "
                "with what really happens."
            )
        )
    if earlier is None:
        _PREDICTED[name] = choice
        journal.record(name, "predict", choice=choice)
    return Text(f"Prediction recorded for {name}: {choice!r}. Now run the experiment.")


def reveal(name: str) -> Text:
    """What the experiment really does, beside the learner's prediction (once they made one)."""
    prediction = registry.prediction(name)
    mine = committed(name)
    if mine is None and not _INSTRUCTOR["on"]:
        return Text(
            wrapped(
                f"Commit first: predict({name!r}, choice) with one of {prediction.choices}, "
                "then reveal."
            )
        )
    actual = prediction.outcome()
    if mine is None:
        verdict = f"(instructor mode) the experiment says {actual!r}."
    elif mine == actual:
        verdict = f"You predicted {mine!r}, and the experiment says {actual!r}: right."
    else:
        verdict = f"You predicted {mine!r}; the experiment says {actual!r}. Worth a second look."
    return Text(f"{wrapped(verdict)}\n{wrapped(prediction.explanation)}")


def instructor_mode(on: bool = True) -> None:
    """Reveal every solution without hints (for instructors preparing a session)."""
    _INSTRUCTOR["on"] = bool(on)


def reveal_all() -> str:
    """Every exercise's prompt and reference solution (instructor mode only)."""
    if not _INSTRUCTOR["on"]:
        raise CourseError(
            "reveal_all() is for instructors: set COURSE_INSTRUCTOR=1 or call "
            "instructor_mode(True) first"
        )
    parts = [
        f"## {ex.name}\n{ex.prompt}\n\n{solutions.find(ex.name).text}"
        for ex in all_exercises().values()
    ]
    return Text("\n\n".join(parts))
