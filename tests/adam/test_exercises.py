"""Notebook 03's checkers: Adam bitwise on hidden problems, op isolation on hidden profiles."""

from __future__ import annotations

import pytest

from course import emps
from course.adam import exercises
from course.exercises import check, get


def messages(name: str) -> list[str]:
    return [check(name, wrong()).message for wrong in get(name).wrong_answers]


def test_adam_step_names_each_classic_slip():
    found = messages("03.adam_step")
    no_bias, no_sqrt, contiguous, eps_inside, rebinding, fixed_betas, reordered = found
    assert "bias corrections are missing" in no_bias
    assert "sqrt is missing" in no_sqrt
    assert "preserve_format" in contiguous and "stride" in contiguous
    assert "eps is inside the square root" in eps_inside
    assert "bound to the local name `param`" in rebinding and "lost write" in rebinding
    assert "betas (0.5, 0.99)" in fixed_betas
    assert "not bitwise equal" in reordered and "order of operations" in reordered


def test_adam_step_rejects_a_non_function():
    verdict = check("03.adam_step", 0.5)
    assert not verdict.passed and "function" in verdict.message


def test_eps_placement_matters_on_the_zero_gradient_problem():
    """Exact zeros and eps = 1e-3 make eps inside the sqrt wrong by far more than rounding."""
    problem = exercises.PROBLEMS[3]
    verdict = exercises._run_problem(exercises._flawed_step("eps inside the sqrt"), problem)
    assert verdict is not None and "eps is inside the square root" in verdict.message


def test_every_problem_passes_the_reference():
    for problem in exercises.PROBLEMS:
        assert exercises._run_problem(exercises._reference_step(), problem) is None


def test_isolate_op_catches_memory_inputs_cpu_copies_and_zero_starts():
    memory, inputs, cpu, copy, zeros = messages("03.isolate_op")
    assert "storage-offset" in memory  # contiguous, so nothing is lost
    assert "transposed output" in inputs and "is lost" in inputs
    assert "is lost" in cpu and "is lost" in copy
    assert "mul_" in zeros and "arrives" in zeros  # from zeros, mul_ looks like "nothing"


def test_isolate_op_memory_fails_on_a_later_profile_too():
    story = emps.TORCH_2_2_1
    later = [i for i, case in enumerate(exercises.ISOLATIONS) if case.profile is not story]
    assert {exercises._expected_isolation(i) for i in later} == {"updates"}


def test_isolate_op_wants_one_of_two_words():
    verdict = check("03.isolate_op", lambda op, out, inp: "unchanged")
    assert not verdict.passed and "'updates', 'lost'" in verdict.message


def test_which_ops_outcome_is_measured():
    assert exercises._which_ops() == "addcmul_ and addcdiv_"


@pytest.mark.parametrize(
    ("answer", "words"),
    [("addcmul_ only", "explodes"), ("both", "masked"), ("addcmul", "'addcmul_ only'")],
)
def test_predict_explodes_explains_each_case(answer, words):
    verdict = check("03.predict_explodes", answer)
    assert verdict.passed == (answer == "addcmul_ only") and words in verdict.message


def test_predict_explodes_never_names_the_answer_when_wrong():
    verdict = check("03.predict_explodes", "addcdiv_ only")
    assert "addcmul_ only" not in verdict.expected
