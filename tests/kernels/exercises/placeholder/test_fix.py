"""06.fix_addcmul: hidden calls under the device's contract, and feedback naming the cause."""

from __future__ import annotations

from course import emps
from course.exercises import check
from course.kernels.exercises.placeholder import fix
from tests.corpus import corpus_tests
from tests.kernels.exercises.placeholder.corpus_fix import CORPORA, fix_addcmul

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_hidden_calls_vary_everything_the_prompt_names():
    calls = fix.fix_variants()
    assert {family for _, family, _, _ in calls} == {"addcmul", "addcdiv"}
    assert len({value for _, _, value, _ in calls}) >= 5
    outputs = [output for *_, output in calls]
    assert max(o.dim() for o in outputs) >= 4
    assert any(o.storage_offset() and not o.is_contiguous() for o in outputs)
    assert any(o.stride(-1) == 1 and not o.is_contiguous() for o in outputs)  # row-sliced


def test_fix_needs_the_encoder_to_train(monkeypatch):
    class Frozen:
        def summary(self):
            return {"encoder_frozen": True, "encoder_max_exp_avg_sq": 0.0}

    monkeypatch.setattr(fix, "run", lambda **kw: Frozen())
    verdict = fix.check_fix(fix_addcmul())
    assert not verdict.passed and "encoder has not moved" in verdict.message


def test_fix_checker_leaves_the_process_backend_alone():
    before = emps.current_backend()
    fix.check_fix(fix_addcmul())
    assert emps.current_backend() is before


def test_not_a_kernel():
    assert "kernel function" in check("06.fix_addcmul", 42).message
