"""The registry: every exercise and prediction by name, each loaded with its own lesson only.

A name's two-digit prefix ("04" in "04.address") leads through the course map
(`course.catalog.Lesson.checks`) to the modules that register that lesson's exercises, so one
check imports its lesson, this shared layer and the concept tools the lesson uses, never every
lesson: the shared layer reaches up into no lesson, at import time or at run time.

Checks and predictions are different things. A check can be retried until it passes, so its
answer must be something the learner computes or writes; a question with a short list of
answers ("which of these four") is a `Prediction`: committed once, before the experiment, saved
in the journal (a restarted kernel keeps it), and compared with the real outcome by `reveal`.
A name is one or the other, never both.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from course import catalog
from course.errors import CourseError
from course.exercises.verdicts import Verdict


@dataclass
class Exercise:
    """One exercise as the course holds it: what is asked, how it is checked, how long it takes.

    The reference answer is not here: it is the solution region of the lesson's reference
    notebook (`course.exercises.solutions`), the one text a learner sees as the solution and the
    tests run through `checker`. Wrong answers and their expected feedback are test data, in
    tests/. `answer_words`: words that would give the answer away if the notebook showed them
    before the exercise (tests/test_spoilers.py looks for them, and for a reviewer's paraphrases,
    in earlier cells, outputs and printed objects). `minutes`: what the exercise takes a learner
    who tries it before any hint, the unit of the instructor's guide and of nbgrader's points."""

    name: str
    prompt: str
    checker: Callable[[Any], Verdict]
    hint: str
    minutes: int
    answer_words: tuple[str, ...] = ()

    @property
    def lesson(self) -> catalog.Lesson:
        """The lesson this exercise belongs to, read from its name's prefix."""
        return lesson_of(self.name)


@dataclass
class Prediction:
    """A choice the learner commits to before an experiment; the reveal runs the real one.

    `outcome` runs the experiment (the reference, on the real or emulated device) and returns one
    of `choices`, so a reveal can never disagree with what the learner's own run would show.
    `explanation` is prose (reveal wraps it to the cell). `answer_words` name the correct
    choice in other words: shown before the prediction, they would answer it
    (tests/test_spoilers.py looks for them, for the correct choice itself and for a reviewer's
    paraphrases).
    """

    name: str
    question: str
    choices: tuple[str, ...]
    outcome: Callable[[], str]
    explanation: str
    answer_words: tuple[str, ...] = ()


_REGISTRY: dict[str, Exercise] = {}
_PREDICTIONS: dict[str, Prediction] = {}


def register(exercise: Exercise) -> Exercise:
    """Add an exercise to the registry (idempotent for re-imports of the same module)."""
    if exercise.name in _PREDICTIONS:
        raise CourseError(f"{exercise.name!r} is a prediction already; a name is one or the other")
    if not isinstance(exercise.minutes, int) or not 1 <= exercise.minutes <= 60:
        raise CourseError(f"{exercise.name}: minutes must be a whole number from 1 to 60")
    _REGISTRY[exercise.name] = exercise
    return exercise


def register_prediction(prediction: Prediction) -> Prediction:
    """Add a prediction to the registry (idempotent for re-imports of the same module)."""
    if prediction.name in _REGISTRY:
        raise CourseError(
            f"{prediction.name!r} is a checked exercise already; a name is one or the other"
        )
    if not prediction.choices or not all(isinstance(c, str) for c in prediction.choices):
        raise CourseError(f"{prediction.name}: choices must be strings, got {prediction.choices!r}")
    _PREDICTIONS[prediction.name] = prediction
    return prediction


def lesson_of(name: str) -> catalog.Lesson:
    """The lesson an exercise or prediction name belongs to ("04.address" -> 04_strides)."""
    prefix = name.split(".", 1)[0] if isinstance(name, str) else ""
    for lesson in catalog.LESSONS:
        if lesson.filename[:2] == prefix and "." in name:
            return lesson
    lessons = ", ".join(lesson.filename[:2] for lesson in catalog.LESSONS)
    raise CourseError(
        f"{name!r} is not an exercise name: names are a lesson's number and a word, e.g. "
        f"'04.address' (lessons: {lessons})"
    )


def load_lesson(lesson: catalog.Lesson) -> None:
    """Import the modules that register one lesson's exercises and predictions."""
    for module in lesson.checks:
        importlib.import_module(module)


def _known(kind: str, names: dict[str, Any], name: str) -> CourseError:
    lesson = name.split(".", 1)[0]
    same = sorted(n for n in names if n.startswith(f"{lesson}."))
    return CourseError(
        f"no {kind} named {name!r}; lesson {lesson}'s {kind}s: {', '.join(same) or 'none'}"
    )


def get(name: str) -> Exercise:
    """Look up an exercise by name, loading its lesson only; the lesson's names if it is unknown."""
    if name not in _REGISTRY:
        load_lesson(lesson_of(name))
    if name not in _REGISTRY:
        raise _known("exercise", _REGISTRY, name)
    return _REGISTRY[name]


def prediction(name: str) -> Prediction:
    """Look up a prediction by name, loading its lesson only."""
    if name not in _PREDICTIONS:
        load_lesson(lesson_of(name))
    if name not in _PREDICTIONS:
        raise _known("prediction", _PREDICTIONS, name)
    return _PREDICTIONS[name]


def load_all() -> None:
    """Import every lesson's checks: for the tools that list the whole course (the tracker,
    `reveal_all`, the instructor's guide), never for one check."""
    for lesson in catalog.LESSONS:
        load_lesson(lesson)


def all_exercises() -> dict[str, Exercise]:
    """Every exercise in the course, in lesson order."""
    load_all()
    return dict(sorted(_REGISTRY.items()))


def all_predictions() -> dict[str, Prediction]:
    """Every prediction in the course, in lesson order."""
    load_all()
    return dict(sorted(_PREDICTIONS.items()))
