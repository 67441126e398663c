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

A learner copy's blanks (`...`, a function or method that still raises
`NotImplementedError("your code here")`, an empty class or function body), alone or inside a
dict, tuple or list, are "not attempted yet" whatever their type: such a check is not journaled,
so "Run All" on an untouched copy records nothing.

Checks and predictions are different things. A check can be retried until it passes, so its
answer must be something the learner computes or writes; a question with a short list of
answers ("which of these four") is a `Prediction`: committed once, before the experiment, saved
in the journal (a restarted kernel keeps it), and compared with the real outcome by `reveal`.
A name is one or the other, never both.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import html
import importlib
import inspect
import os
import sys
import textwrap
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from course import journal
from course.errors import CourseError


@contextlib.contextmanager
def ready_made(functions: Mapping[str, Callable]) -> Iterator[list[str]]:
    """The names (keys of `functions`) of those called inside the block, in call order.

    Why: a ready-made answer (the course's own helper, torch's optimizer) wrapped in a function
    of the learner's passes every comparison and teaches nothing. A profile hook (sys.setprofile,
    as a profiler uses) sees every Python call, so a helper called through a lambda or another
    import route is seen too; any hook already installed keeps receiving events.
    """
    codes = {inspect.unwrap(function).__code__: name for name, function in functions.items()}
    seen: list[str] = []
    previous = sys.getprofile()

    def hook(frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in codes:
            seen.append(codes[frame.f_code])
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(hook)
    try:
        yield seen
    finally:
        sys.setprofile(previous)


@dataclass
class Verdict:
    """The outcome of one check: passed or not, with what was wrong and yours vs expected.

    `attempted` is False for a learner copy's untouched blank: such a verdict is not journaled."""

    passed: bool
    message: str
    yours: str = ""
    expected: str = ""
    attempted: bool = True

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
    """One exercise: its checker, hint, reference answer and known wrong answers.

    `answer_words`: words that would give the answer away if the notebook showed them before the
    exercise (tests/test_notebook_policy.py looks for them in earlier cells and outputs)."""

    name: str
    prompt: str
    checker: Callable[[Any], Verdict]
    hint: str
    reference: Callable[[], Any]
    wrong_answers: tuple[Callable[[], Any], ...] = field(default_factory=tuple)
    answer_words: tuple[str, ...] = ()

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
    if exercise.name in _PREDICTIONS:
        raise CourseError(f"{exercise.name!r} is a prediction already; a name is one or the other")
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


def untouched(answer: object, label: str = "your answer") -> list[str]:
    """The parts of an answer that are still a learner copy's blank, by name; [] when none is.

    Blank: `...` given as the answer; a function or method that still holds the scaffold's
    `raise NotImplementedError("your code here")`; a function whose body is only `pass` or
    `...`; a class with nothing in it. A dict, tuple or list is looked into, so a dict of three
    scaffold functions is as blank as one. None is not blank: no learner copy leaves it, and it
    is what a function that prints instead of returning gives (`check` says so).
    """
    return _blank_parts(answer, label)


def _blank_parts(answer: object, label: str) -> list[str]:
    if answer is Ellipsis:
        return [label]
    if isinstance(answer, dict):
        return [part for key, value in answer.items() for part in _blank_parts(value, str(key))]
    if isinstance(answer, tuple | list):
        return [part for value in answer for part in _blank_parts(value, label)]
    if isinstance(answer, functools.partial):
        return _blank_parts(answer.func, label)
    if inspect.isclass(answer):
        return _blank_class(answer)
    if isinstance(answer, types.FunctionType | types.MethodType):
        function = getattr(answer, "__func__", answer)
        return [function.__name__] if _blank_function(function) else []
    return []


def _blank_class(cls: type) -> list[str]:
    """A class defined by the learner: its scaffold methods, or the class itself when empty."""
    own = [k for k in vars(cls) if not (k.startswith("__") and k.endswith("__"))]
    methods = {
        name: getattr(value, "__func__", getattr(value, "fget", value))
        for name, value in vars(cls).items()
        if isinstance(value, types.FunctionType | staticmethod | classmethod | property)
    }
    if not own and not methods and cls.__bases__ == (object,):  # `class X: pass`
        return [cls.__name__]
    return [
        f"{cls.__name__}.{name}"
        for name, function in methods.items()
        if isinstance(function, types.FunctionType) and _holds_scaffold(function.__code__)
    ]


def _blank_function(function: types.FunctionType) -> bool:
    return _holds_scaffold(function.__code__) or _empty_body(function)


def _holds_scaffold(code: types.CodeType) -> bool:
    """Whether compiled code (or a function nested in it) still holds the scaffold's raise."""
    return any(
        const == SCAFFOLD or (isinstance(const, types.CodeType) and _holds_scaffold(const))
        for const in code.co_consts
    )


def _empty_body(function: types.FunctionType) -> bool:
    """A `def f(...): pass` (or `...`, or only a docstring): nothing written yet."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):  # no source (a lambda in an expression, a builtin)
        return False
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = node.body[1:] if ast.get_docstring(node) is not None else node.body
    return all(
        isinstance(s, ast.Pass)
        or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is ...)
        for s in body
    )


def blank(answer: object) -> Verdict | None:
    """A "not attempted yet" verdict (never journaled) for a blank answer, else None.

    Checkers that take answers apart may call it on a part; `check` calls it on the whole."""
    parts = untouched(answer)
    if not parts:
        return None
    if parts == ["your answer"]:
        return not_attempted("replace the `...` with your answer, then run the cell.")
    names = ", ".join(parts)
    return not_attempted(
        f"{names} {'is' if len(parts) == 1 else 'are'} still blank: write "
        f"{'it' if len(parts) == 1 else 'them'} in place of "
        f'`raise NotImplementedError("{SCAFFOLD}")` (or `pass`), then run the cell.'
    )


def blank_error(exc: BaseException) -> Verdict | None:
    """A "not attempted yet" verdict when the learner's code raised the scaffold, else None."""
    if not is_scaffold(exc):
        return None
    return not_attempted("your code still raises NotImplementedError: write it, then run the cell.")


def not_attempted(detail: str) -> Verdict:
    """The "not attempted yet" verdict, never journaled: for a checker that finds a blank part."""
    return Verdict(False, f"{NOT_ATTEMPTED}: {detail}", attempted=False)


def _watched(answer: Any) -> tuple[Any, Callable[[], bool]]:
    """The answer, and a probe: did the learner's function raise the untouched scaffold?

    A blank function is caught before any checker runs (`blank`); this catches a function that
    calls a blank one. A checker may catch the learner's exceptions itself (to say on which
    variant it went wrong), so `check` cannot rely on seeing the NotImplementedError; the
    wrapper notes it. Only the scaffold's own message counts: a NotImplementedError from torch
    (an op a device lacks) is a real answer's failure, not a blank one.
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


def _none_answer() -> Verdict:
    """None is an answer, and a common wrong one: say where it comes from."""
    return failed(
        "your answer is None: what a function that prints its result instead of returning it "
        "gives, or a call that returns nothing (an in-place method, print). Hand in the value "
        "itself"
    )


def _run_checker(exercise: Exercise, answer: Any) -> Verdict:
    """The checker's verdict; a crash, or the learner's function raising the scaffold, told."""
    answer, raised_scaffold = _watched(answer)
    try:
        verdict = exercise.checker(answer)
    except Exception as exc:
        verdict = blank_error(exc) or failed(
            f"checking your answer raised {type(exc).__name__}: {exc}"
        )
    if raised_scaffold():
        verdict = not_attempted("your function still raises NotImplementedError.")
    return verdict


def check(name: str, answer: Any) -> Verdict:
    """Check a learner's answer and save the result to the journal; never raises on the answer.

    A blank answer (see `untouched`) is "not attempted yet" and is not saved: the journal holds
    only what the learner really tried."""
    exercise = get(name)
    verdict = blank(answer)
    if verdict is not None:
        return verdict
    verdict = _none_answer() if answer is None else _run_checker(exercise, answer)
    if not verdict.attempted:
        return verdict
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


TEXT_WIDTH = 96  # JupyterLab breaks longer printed lines anywhere, mid-word


def wrapped(text: str, width: int = TEXT_WIDTH) -> str:
    """Text filled to fit a notebook cell: paragraphs (split at blank lines) re-flowed to `width`.

    Single line breaks inside a paragraph are reflowed too, so prose is written as one string
    and never wrapped by hand."""
    return "\n\n".join(
        textwrap.fill(" ".join(paragraph.split()), width, break_on_hyphens=False)
        for paragraph in text.split("\n\n")
    )


@dataclass
class Prediction:
    """A choice the learner commits to before an experiment; the reveal runs the real one.

    `outcome` runs the experiment (the reference, on the real or emulated device) and returns one
    of `choices`, so a reveal can never disagree with what the learner's own run would show.
    `explanation` is prose (reveal wraps it to the cell). `answer_words` name the correct
    choice in other words: shown before the prediction, they would answer it
    (tests/test_notebook_policy.py looks for them, and for the correct choice itself).
    """

    name: str
    question: str
    choices: tuple[str, ...]
    outcome: Callable[[], str]
    explanation: str
    answer_words: tuple[str, ...] = ()


_PREDICTIONS: dict[str, Prediction] = {}
_PREDICTED: dict[str, str] = {}


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


def _prediction(name: str) -> Prediction:
    if name not in _PREDICTIONS:
        all_predictions()  # imports every lesson's exercises module, which registers predictions
    if name not in _PREDICTIONS:
        raise CourseError(
            f"no prediction named {name!r}; known predictions: {', '.join(sorted(_PREDICTIONS))}"
        )
    return _PREDICTIONS[name]


def all_predictions() -> dict[str, Prediction]:
    """Every prediction in the course, importing the modules that define them."""
    all_exercises()
    return dict(_PREDICTIONS)


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
    prediction = _prediction(name)
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
    prediction = _prediction(name)
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
