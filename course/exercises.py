"""Auto-checked exercises: a checker that says precisely what is wrong, a hint, then a solution.

Every exercise in the course is an `Exercise` registered here by the module that teaches its
concept. A learner's cell calls `check(name, answer)`; after a miss it suggests the hint, spelled
as a line that runs in any cell (`from course.exercises import hint; hint(...)`), because a
notebook need not have imported `hint`. Only after the hint does `solution(name)` reveal the
reference (instructors skip the gate with `COURSE_INSTRUCTOR=1` or `instructor_mode(True)`).
`hint` and `solution` display their text as well as returning it, so a cell that calls both
shows both. Every check, hint and solution is saved to the learner's journal (`course.journal`),
which `python -m course progress` and notebook 00 summarise.

Each exercise carries its reference answer and plausible wrong answers, and the test suite runs
all of them through the checker, so no checker can silently accept everything.
"""

from __future__ import annotations

import functools
import html
import importlib
import inspect
import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from course import journal
from course.errors import CourseError


@dataclass
class Verdict:
    """The outcome of one check: passed or not, with what was wrong and yours vs expected."""

    passed: bool
    message: str
    yours: str = ""
    expected: str = ""

    def __str__(self) -> str:
        mark = "PASSED" if self.passed else "NOT YET"
        lines = [f"[{mark}] {self.message}"]
        if self.yours or self.expected:
            lines += [f"  yours:    {self.yours}", f"  expected: {self.expected}"]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = "#1b7f3b" if self.passed else "#b00020"
        body = html.escape(str(self)).replace("\n", "<br>")
        return f"<pre style='color:{colour};white-space:pre-wrap'>{body}</pre>"


def passed(message: str) -> Verdict:
    """A passing verdict."""
    return Verdict(True, message)


def failed(message: str, yours: object = "", expected: object = "") -> Verdict:
    """A failing verdict that shows the learner's value beside the expected one."""
    return Verdict(False, message, str(yours), str(expected))


@dataclass
class Exercise:
    """One exercise: its checker, hint, reference answer and known wrong answers."""

    name: str
    prompt: str
    checker: Callable[[Any], Verdict]
    hint: str
    reference: Callable[[], Any]
    wrong_answers: tuple[Callable[[], Any], ...] = field(default_factory=tuple)

    def solution_source(self) -> str:
        """The reference answer's source code, as a learner would write it."""
        return textwrap.dedent(inspect.getsource(self.reference))


_REGISTRY: dict[str, Exercise] = {}
_HINTS_SEEN: set[str] = set()
_INSTRUCTOR = {"on": os.environ.get("COURSE_INSTRUCTOR", "") not in ("", "0")}


def exercise_modules() -> list[str]:
    """Every lesson's `exercises` module: the one place a lesson registers its exercises.

    Found by walking the package, so a new lesson's exercises are picked up without a hand-kept
    list that could drift.
    """
    import pkgutil

    import course

    return sorted(
        info.name
        for info in pkgutil.walk_packages(course.__path__, "course.")
        if info.name.rsplit(".", 1)[-1] == "exercises" and info.name != __name__
    )


def register(exercise: Exercise) -> Exercise:
    """Add an exercise to the registry (idempotent for re-imports of the same module)."""
    _REGISTRY[exercise.name] = exercise
    return exercise


def all_exercises() -> dict[str, Exercise]:
    """Every exercise in the course, importing the modules that define them."""
    for module in exercise_modules():
        importlib.import_module(module)
    return dict(_REGISTRY)


def get(name: str) -> Exercise:
    """Look up an exercise by name, with the list of names if it does not exist."""
    if name in _REGISTRY:  # usually: the notebook imported the module that defines it
        return _REGISTRY[name]
    exercises = all_exercises()
    if name not in exercises:
        raise CourseError(
            f"no exercise named {name!r}; known exercises: {', '.join(sorted(exercises))}"
        )
    return exercises[name]


NOT_ATTEMPTED = "not attempted yet"
SCAFFOLD = "your code here"  # the learner copies' `raise NotImplementedError("your code here")`


def advice(function: str, name: str) -> str:
    """A line that runs in any cell, whatever the notebook imported: the import, then the call."""
    return f"from course.exercises import {function}; {function}({name!r})"


def is_scaffold(exc: BaseException) -> bool:
    """The learner copy's untouched `raise NotImplementedError("your code here")`."""
    return isinstance(exc, NotImplementedError) and str(exc) == SCAFFOLD


def _watched(answer: Any) -> tuple[Any, Callable[[], bool]]:
    """The answer, and a probe: did the learner's function raise the untouched scaffold?

    A checker may catch the learner's exceptions itself (to say on which variant it went
    wrong), so `check` cannot rely on seeing the NotImplementedError; the wrapper notes it.
    Only plain functions are wrapped (classes and objects pass through untouched), and only the
    scaffold's own message counts: a NotImplementedError from torch (an op a device lacks) is
    a real answer's failure, not a blank one.
    """
    if not inspect.isfunction(answer):
        return answer, lambda: False
    seen: list[bool] = []

    @functools.wraps(answer)
    def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            return answer(*args, **kwargs)
        except NotImplementedError as exc:
            seen.append(is_scaffold(exc))
            raise

    return watched, lambda: any(seen)


def check(name: str, answer: Any) -> Verdict:
    """Check a learner's answer and save the result to the journal; never raises on the answer."""
    exercise = get(name)
    if answer is Ellipsis or answer is None:
        return failed(f"{NOT_ATTEMPTED}: replace the `...` with your answer, then run the cell.")
    answer, blank = _watched(answer)
    try:
        verdict = exercise.checker(answer)
    except Exception as exc:
        verdict = failed(f"checking your answer raised {type(exc).__name__}: {exc}")
    if blank():
        return failed(f"{NOT_ATTEMPTED}: your function still raises NotImplementedError.")
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
    exercise = get(name)
    if not _hint_seen(name) and not _INSTRUCTOR["on"]:
        return Shown(f"Try the hint first, then the solution. Run:  {advice('hint', name)}")
    journal.record(name, "solution")
    return Shown(f"Reference solution for {name}:\n\n{exercise.solution_source()}")


@dataclass
class Prediction:
    """A choice the learner commits to before an experiment; the reveal runs the real one.

    `outcome` runs the experiment (the reference, on the real or emulated device) and returns one
    of `choices`, so a reveal can never disagree with what the learner's own run would show.
    """

    name: str
    question: str
    choices: tuple[str, ...]
    outcome: Callable[[], str]
    explanation: str


_PREDICTIONS: dict[str, Prediction] = {}
_PREDICTED: dict[str, str] = {}


def register_prediction(prediction: Prediction) -> Prediction:
    """Add a prediction to the registry (idempotent for re-imports of the same module)."""
    _PREDICTIONS[prediction.name] = prediction
    return prediction


def _prediction(name: str) -> Prediction:
    if name not in _PREDICTIONS:
        all_exercises()  # imports every lesson's exercises module, which registers predictions
    if name not in _PREDICTIONS:
        raise CourseError(
            f"no prediction named {name!r}; known predictions: {', '.join(sorted(_PREDICTIONS))}"
        )
    return _PREDICTIONS[name]


def predict(name: str, choice: object) -> Text:
    """Commit to a prediction before running the experiment; `reveal(name)` compares later."""
    prediction = _prediction(name)
    if choice is Ellipsis or choice is None:
        return Text(f"No prediction yet: {prediction.question} choose one of {prediction.choices}.")
    if choice not in prediction.choices:
        raise CourseError(
            f"{choice!r} is not one of the choices for {name}; choose one of {prediction.choices}"
        )
    _PREDICTED[name] = str(choice)
    return Text(f"Prediction recorded for {name}: {choice!r}. Now run the experiment.")


def reveal(name: str) -> Text:
    """What the experiment really does, beside the learner's prediction (once they made one)."""
    prediction = _prediction(name)
    mine = _PREDICTED.get(name)
    if mine is None and not _INSTRUCTOR["on"]:
        return Text(
            f"Commit first: predict({name!r}, choice) with one of {prediction.choices}, "
            "then reveal."
        )
    actual = prediction.outcome()
    if mine is None:
        verdict = f"(instructor mode) the experiment says {actual!r}."
    elif mine == actual:
        verdict = f"You predicted {mine!r}, and the experiment says {actual!r}: right."
    else:
        verdict = f"You predicted {mine!r}; the experiment says {actual!r}. Worth a second look."
    return Text(f"{verdict}\n{prediction.explanation}")


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
        f"## {ex.name}\n{ex.prompt}\n\n{ex.solution_source()}" for ex in all_exercises().values()
    ]
    return Text("\n\n".join(parts))


class Text(str):
    """A string that displays as itself (not as a quoted repr) in a notebook."""

    def __repr__(self) -> str:
        return str(self)


class Shown(Text):
    """Text displayed the moment it is made, and only once.

    `hint(...)` and `solution(...)` in one cell must both appear, but a function's return value
    is shown only when it is the cell's last expression. So the text displays itself at once;
    when it is also the last expression, IPython asks it to display again, and it declines.
    Outside IPython (a script, pytest) nothing is displayed: the caller has the returned text.
    """

    def __new__(cls, text: str) -> Shown:
        self = super().__new__(cls, text)
        self._displayed = False
        if _ipython_shell() is not None:
            from IPython.display import display

            display(self)
        return self

    def _ipython_display_(self) -> None:
        if self._displayed:
            return
        self._displayed = True
        from IPython.display import display

        display({"text/plain": str(self)}, raw=True)


def _ipython_shell() -> object | None:
    """The running IPython shell, if this code runs inside one (never imports IPython)."""
    import sys

    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None
