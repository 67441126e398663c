"""Notebooks 06-07's checkers: hidden layouts, the device's contract, feedback that explains."""

from __future__ import annotations

from course import emps
from course.exercises import _prediction, check, get
from course.kernels import exercises as kernel_exercises


def _wrong(name: str, index: int):
    return check(name, get(name).wrong_answers[index]())


def test_fix_accepts_the_working_patterns_and_tries_hidden_layouts():
    assert check("06.fix_addcmul", get("06.fix_addcmul").reference()).passed
    assert check("06.fix_addcmul", emps.gather_compute_scatter).passed
    assert check("06.fix_addcmul", emps.output_placeholder).passed
    names = [name for name, _ in kernel_exercises.fix_variants()]
    assert {"storage-offset", "permuted"} <= set(names)


def test_fix_feedback_for_each_classic_mistake():
    buggy, zeros, no_copy, skip, clone, raw = (_wrong("06.fix_addcmul", i) for i in range(6))
    assert "never reached the output" in buggy.message and "transposed" in buggy.message
    assert "wrong values" in zeros.message
    assert "never reached the output" in no_copy.message
    assert "MPSGraph before macOS 15" in skip.message and "contiguous buffers only" in skip.message
    assert "clone() and empty_like() keep" in clone.message and "notebook 04" in clone.message
    assert "raw tensor" in raw.message and "AttributeError" not in raw.message
    assert "kernel function" in check("06.fix_addcmul", 42).message


def test_fix_needs_the_encoder_to_train(monkeypatch):
    class Frozen:
        def summary(self):
            return {"encoder_frozen": True, "encoder_max_exp_avg_sq": 0.0}

    monkeypatch.setattr(kernel_exercises, "run", lambda **kw: Frozen())
    verdict = kernel_exercises.check_fix(emps.gather_compute_scatter)
    assert not verdict.passed and "encoder has not moved" in verdict.message


def test_fix_checker_leaves_the_process_backend_alone():
    before = emps.current_backend()
    kernel_exercises.check_fix(get("06.fix_addcmul").reference())
    assert emps.current_backend() is before


def test_output_placeholder_feedback():
    no_copy, clone, enter, always = (_wrong("06.output_placeholder", i) for i in range(4))
    assert "never reached the output" in no_copy.message
    assert "contiguous buffers only" in clone.message and "notebook 04" in clone.message
    assert "never reached the output" in enter.message
    assert "wasted copy" in always.message

    class NoEnter:
        def __init__(self, tensor):
            self.tensor, self.buffer = tensor, tensor.contiguous()

        def __enter__(self):
            pass

        def __exit__(self, *exc):
            self.tensor.copy_(self.buffer)

    assert "return self" in check("06.output_placeholder", NoEnter).message


def test_a_scaffold_is_not_attempted():
    class Scaffold:
        def __init__(self, tensor):
            raise NotImplementedError("your code here")

    assert "not attempted" in check("06.output_placeholder", Scaffold).message


def test_predictions_run_the_experiment():
    assert _prediction("06.lost_write").outcome() == "its old values, unchanged"
    assert _prediction("06.macos15").outcome() == "no: the write arrives"


def test_scramble_feedback_never_shows_the_answer():
    reference = get("07.predict_scramble").reference()
    assert check("07.predict_scramble", reference).passed
    torch_answer = _wrong("07.predict_scramble", 0)
    assert "torch's (correct) answer" in torch_answer.message
    assert str(reference) not in str(torch_answer)
    near = _wrong("07.predict_scramble", 2)
    assert "'?'" in near.expected and str(reference) not in str(near)
    assert "2 rows of 3" in _wrong("07.predict_scramble", 1).message
    assert not check("07.predict_scramble", "zeros").passed
