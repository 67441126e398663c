"""07.predict_scramble: a prediction committed once, never shown, refused after the naive
kernel ran in the notebook."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course import journal
from course.exercises import check, get
from course.kernels import cpp
from course.kernels.cpp import build
from course.kernels.exercises.compiled import scramble
from tests.corpus import assert_told_its_cause, corpus_cases

SCRAMBLE = "07.predict_scramble"


@pytest.fixture(autouse=True)
def new_learner(tmp_path, monkeypatch):
    """Each test a learner of its own: an empty journal, the naive kernel not run yet."""
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    build.NAIVE_RUNS.clear()  # in place: the harness notes into the same list


@pytest.fixture
def in_a_notebook(monkeypatch):
    monkeypatch.setattr(scramble, "_in_a_notebook", lambda: True)


CAUSES = {
    "07.predict_scramble": (
        "torch's (correct) answer",  # the right addcmul
        "2 rows of 3",  # shape (3, 2)
        "each exactly once",  # one cell off, with a 6 that t1 never held
        "as if its strides were (2, 1)",  # strides swapped
        "the naive kernel does write",  # zeros, as if the write were lost
        "computed by the course's code",  # naive_model's own output
        "for each memory slot i",  # reversed
        "each exactly once",  # counted from 1
        "the naive kernel does write",  # out's own zeros, as a tensor laid out like out
        "each exactly once",  # every value doubled
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


@pytest.mark.parametrize("index", range(len(get(SCRAMBLE).wrong_answers)))
def test_scramble_feedback_never_shows_the_answer(index):
    reference = get(SCRAMBLE).reference()
    verdict = check(SCRAMBLE, get(SCRAMBLE).wrong_answers[index]())
    assert str(reference) not in str(verdict) and str(reference)[1:-1] not in str(verdict)


def test_a_typed_in_tensor_is_a_prediction_too_and_words_are_not():
    assert not check(SCRAMBLE, "zeros").passed
    assert check(SCRAMBLE, torch.tensor(get(SCRAMBLE).reference())).passed


def test_the_prediction_is_committed_once_and_survives_a_restart():
    reference = get(SCRAMBLE).reference()
    first = check(SCRAMBLE, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    assert not first.passed and "torch's (correct) answer" in first.message
    again = check(SCRAMBLE, reference)  # the same journal: a new kernel remembers it
    assert not again.passed and "a prediction is made once" in again.message
    assert "torch's (correct) answer" in again.message  # still judged as the first answer
    assert str(reference) not in again.message
    checks = [e for e in journal.load() if e.exercise == SCRAMBLE and e.event == "check"]
    assert len(checks) == 1  # the re-judged answer is not a new attempt


def test_the_right_prediction_rerun_passes_without_a_new_attempt():
    reference = get(SCRAMBLE).reference()
    assert check(SCRAMBLE, reference).passed
    assert check(SCRAMBLE, reference).passed  # the cell run again, after a restart
    assert sum(e.event == "check" for e in journal.load()) == 1
    changed = check(SCRAMBLE, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    assert not changed.passed
    assert "that answer counts, not this one. It was right" in changed.message


def test_malformed_answers_commit_nothing():
    assert "2 rows of 3" in check(SCRAMBLE, [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]).message
    assert journal.prediction(SCRAMBLE) is None
    assert check(SCRAMBLE, get(SCRAMBLE).reference()).passed


def _refused_after(experiment, named: str) -> None:
    answer = experiment()  # the gap: a list computed by the course's code before answering
    verdict = check(SCRAMBLE, answer)
    assert not verdict.passed and "already ran in this kernel" in verdict.message
    assert named in verdict.message and "would not be a prediction" in verdict.message
    assert journal.prediction(SCRAMBLE) is None  # nothing committed: a restart, then predict


def test_an_answer_after_the_naive_model_ran_in_the_notebook_is_refused(in_a_notebook):
    _refused_after(lambda: cpp.naive_model(*scramble.scramble_case()).tolist(), "naive_model(...)")


@pytest.mark.compile
def test_an_answer_after_the_compiled_naive_kernel_ran_is_refused(in_a_notebook):
    cpp.load()
    _refused_after(
        lambda: cpp.apply("naive", *scramble.scramble_case()).tolist(), "cpp.apply('naive'"
    )
    build.NAIVE_RUNS.clear()
    _refused_after(lambda: cpp.op("naive")(*scramble.scramble_case()).tolist(), "cpp.op('naive')")


def test_outside_a_notebook_earlier_runs_are_not_the_learners():
    """A test run calls naive_model everywhere; only a learner's kernel is held to the order."""
    cpp.naive_model(*scramble.scramble_case())
    assert check(SCRAMBLE, get(SCRAMBLE).reference()).passed


def test_the_checkers_own_run_of_the_naive_model_is_not_the_learners(in_a_notebook):
    assert not check(SCRAMBLE, [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]).passed
    assert build.NAIVE_RUNS == []


def test_a_tensor_laid_out_like_out_is_refused_only_with_the_kernels_values():
    """Out's own zeros, typed as a tensor, are a prediction (a wrong one): judged, not refused."""
    computed = torch.arange(6.0).reshape(3, 2).t()  # the naive kernel's values, out's strides
    assert "not predicted" in check(SCRAMBLE, computed).message
    assert journal.prediction(SCRAMBLE) is None
    judged = check(SCRAMBLE, torch.zeros(3, 2).t())
    assert "the naive kernel does write" in judged.message


@pytest.mark.parametrize(
    "answer",
    [
        [[0, 2, 4], [1, 3, 5]],  # whole numbers
        ((0.0, 2.0, 4.0), (1.0, 3.0, 5.0)),  # tuples
        np.array([[0, 2, 4], [1, 3, 5]]),
        [list(range(0, 6, 2)), list(range(1, 6, 2))],
        np.arange(6.0).reshape(3, 2).T.tolist(),  # memory modelled in numpy, then listed
    ],
)
def test_the_right_grid_in_other_spellings_passes(answer):
    verdict = check(SCRAMBLE, answer)
    assert verdict.passed, verdict.message
