"""Notebook 01's exercises: checked by running the learner's answer against the story's run."""

from __future__ import annotations

from course.exercises import Exercise, Verdict, failed, passed, register
from course.story.plateau import run


def _check_frozen_names(answer: object) -> Verdict:
    if not isinstance(answer, (list, tuple, set)):
        return failed("give a list of parameter names", type(answer).__name__, "list[str]")
    short = run(steps=10, progress=None)
    expected = sorted(name for name, frozen in short.history.frozen.items() if frozen)
    if sorted(answer) != expected:
        return failed(
            "not the parameters that stayed bitwise equal to their initial values",
            sorted(answer),
            expected,
        )
    return passed("only the encoder weight never moved: not a learning-rate problem.")


def _reference_frozen_names():
    story = run(steps=10, progress=None)
    return [name for name, frozen in story.history.frozen.items() if frozen]


register(
    Exercise(
        name="01.frozen_names",
        prompt="From a Run's history, list the parameters left bitwise equal to their init.",
        checker=_check_frozen_names,
        hint="run.history.frozen maps each parameter name to True if it never changed at all.",
        reference=_reference_frozen_names,
        wrong_answers=(
            lambda: ["encoder.weight", "decoder.weight"],
            lambda: [],
            lambda: ["decoder.weight"],
        ),
    )
)
