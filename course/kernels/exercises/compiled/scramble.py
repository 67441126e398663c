"""Notebook 07's prediction checked as an exercise: the naive C++ kernel's scramble, on paper.

`07.predict_scramble` is committed once, in the journal, and refused once the naive kernel has
run in the notebook: a grid computed by the course's code, or answered after the experiment, is
no prediction. Judged cell by cell; the full result is never shown.
"""

from __future__ import annotations

import json
import sys

import torch

from course import journal
from course.exercises import Exercise, Verdict, failed, passed, register
from course.kernels.cpp import build
from course.kernels.cpp.harness import naive_model, scramble_inputs


def scramble_case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The exercise's inputs: a zero transposed (2, 3) output, t1 = 0..5, t2 = ones."""
    return scramble_inputs(2, 3)


def _known_mistakes() -> list[tuple[list[list[float]], str]]:
    """Grids a learner plausibly writes, and what each one shows they thought."""
    swapped = [[float(2 * r + c) for c in range(3)] for r in range(2)]
    return [
        (
            torch.addcmul(*scramble_case()).tolist(),
            "that is torch's (correct) answer; the naive kernel writes element i of t1 to "
            "memory slot i of the output, and reads nothing about strides",
        ),
        (
            swapped,
            "you put out[r][c] at memory slot r * 2 + c, as if its strides were (2, 1); they "
            "are (1, 2), so out[r][c] sits at slot r * 1 + c * 2",
        ),
        (
            [[0.0] * 3, [0.0] * 3],
            "the naive kernel does write: every memory slot of out gets a value (unlike 06's "
            "lost write, nothing is copied away); the question is which cell each slot is",
        ),
    ]


SCRAMBLE = "07.predict_scramble"


def _naive_result() -> list[list[float]]:
    """The naive kernel's result on the exercise's inputs; the checker's own run is not noted."""
    runs = len(build.NAIVE_RUNS)
    try:
        return naive_model(*scramble_case()).tolist()
    finally:
        del build.NAIVE_RUNS[runs:]


def _in_a_notebook() -> bool:
    """Whether this process is an IPython kernel (a learner's notebook, not a test run)."""
    ipython = sys.modules.get("IPython")
    return ipython is not None and ipython.get_ipython() is not None


def _grid(answer) -> list[list[float]] | Verdict:
    """The answer as 2 rows of 3 floats, or the verdict that says why it is not one."""
    if (
        isinstance(answer, torch.Tensor)
        and answer.stride() == scramble_case()[0].stride()
        and answer.tolist() == _naive_result()
    ):
        return failed(
            "that tensor has out's strides and the naive kernel's values: it was computed by "
            "the course's code (naive_model or the compiled kernel) or by a view laid out like "
            "out, not predicted. Work it out on paper: for each memory slot i, which cell "
            "out[r][c] sits there?",
            f"a tensor with stride {answer.stride()}",
            "your own nested list",
        )
    try:
        grid = torch.as_tensor(answer, dtype=torch.float32).tolist()
    except (TypeError, ValueError, RuntimeError):
        return failed("answer with a nested list of 2 rows of 3 numbers", answer, "2 rows of 3")
    if not (len(grid) == 2 and all(isinstance(r, list) and len(r) == 3 for r in grid)):
        return failed("answer with 2 rows of 3 numbers: out has shape (2, 3)", grid, "2 rows of 3")
    return grid


def check_scramble(answer) -> Verdict:
    """07.predict_scramble: a prediction, committed once (saved in the journal) and only before
    the naive kernel ran in this kernel; judged cell by cell, the full result never shown."""
    grid = _grid(answer)
    if isinstance(grid, Verdict):
        return grid
    earlier = journal.prediction(SCRAMBLE)
    if earlier is not None:
        return _judged_again(json.loads(earlier), grid)
    if build.NAIVE_RUNS and _in_a_notebook():
        return failed(
            f"the naive kernel already ran in this kernel ({build.NAIVE_RUNS[0]}), so its "
            "result may be on screen or in a variable: an answer now would not be a prediction. "
            "Restart the kernel, work the grid out on paper from out's strides, and answer "
            "before running the naive kernel.",
            "an answer after the experiment",
            "a prediction before it",
        )
    journal.record(SCRAMBLE, "predict", choice=json.dumps(grid))
    return _judged(grid)


def _judged_again(committed: list[list[float]], grid: list[list[float]]) -> Verdict:
    """A prediction is made once: the same answer again is judged as before, another one is
    refused with what the committed one got; neither is a new attempt."""
    verdict = _judged(committed)
    if grid != committed:
        verdict = Verdict(
            False,
            f"you committed {committed} for {SCRAMBLE} earlier, and a prediction is made once, "
            "before the experiment: that answer counts, not this one. It was "
            + ("right." if verdict.passed else f"not right: {verdict.message}"),
        )
    verdict.attempted = False  # judged and saved when it was committed
    return verdict


def _judged(yours: list[list[float]]) -> Verdict:
    expected = _naive_result()
    if yours == expected:
        return passed(
            "right: the values 0..5 were written in memory order, and a transposed "
            "output reads memory column by column"
        )
    for grid, cause in _known_mistakes():
        if yours == grid:
            return failed(cause, yours, "the naive kernel's result")
    if sorted(sum(yours, [])) != sorted(sum(expected, [])):
        return failed(
            "out starts at zeros and t2 is ones, so the naive kernel writes t1's six values, "
            "0.0 to 5.0, each exactly once, only in other cells; yours are not those six",
            sorted(sum(yours, [])),
            "0.0 to 5.0, each once, in some arrangement",
        )
    right = [
        [v if v == e else "?" for v, e in zip(r, er, strict=True)]
        for r, er in zip(yours, expected, strict=True)
    ]
    return failed(
        "not what the naive kernel writes (the cells you have right are shown below): for "
        "each memory slot i of out, find which logical cell out[r][c] sits there (its strides "
        "say), then put t1's slot i in it",
        yours,
        f"cells you have right: {right}",
    )


def _scramble_reference():
    # memory slot i gets i; out[r][c] sits in slot r + 2 * c
    return [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]


register(
    Exercise(
        name=SCRAMBLE,
        prompt="out = torch.zeros(3, 2).t() (shape (2, 3), stride (1, 2)); "
        "t1 = arange(6).reshape(2, 3); t2 = ones. What does the naive kernel leave in "
        "out.tolist()? A prediction: your first answer is saved and counts, and it must come "
        "before the naive kernel runs.",
        checker=check_scramble,
        hint="Memory slot i of out gets t1's memory slot i (= i). Logical out[r][c] lives at "
        "memory slot r * 1 + c * 2.",
        reference=_scramble_reference,
        answer_words=("[0.0, 2.0, 4.0]", "[1.0, 3.0, 5.0]", "[0., 2., 4.]", "[1., 3., 5.]"),
        wrong_answers=(
            lambda: [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]],
            lambda: [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]],
            lambda: [[0.0, 2.0, 4.0], [1.0, 3.0, 6.0]],
            lambda: [[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]],
            lambda: [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
            lambda: naive_model(*scramble_case()),
            lambda: [[5.0, 4.0, 3.0], [2.0, 1.0, 0.0]],
            lambda: [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]],
            lambda: torch.zeros(3, 2).t(),
            lambda: [[0.0, 4.0, 8.0], [2.0, 6.0, 10.0]],
        ),
    )
)
