"""06.fix_addcmul: hidden calls under the device's contract, and feedback naming the cause."""

from __future__ import annotations

import pytest

from course import emps
from course.exercises import check, get
from course.kernels.exercises.placeholder import fix
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "06.fix_addcmul": (
        "wrapped call.output itself",  # 2.2.1's kernel
        "nothing copied it into call.output after the graph ran",  # never copies back
        "contiguous buffers only",  # skips the placeholder
        "clone() and empty_like() keep",  # a clone() temporary
        "raw tensor",  # run_graph on a tensor
        "never ran the graph",  # a formula of its own
        "rebound call.output",  # call.output = temporary
        "`call.output.data = ...`",  # swaps the memory
        "after the graph ran",  # copies back before the graph
        "serves addcmul_ and addcdiv_",  # fixes addcmul only
        "permuted 3-d",  # a temporary for matrices only
        "the course's own working kernel",  # emps.gather_compute_scatter passed as the answer
        "do the gather, compute and scatter itself",  # calls it inside its own kernel
        "your copy back runs only for some outputs",  # 2-d outputs only
        "your copy back runs only for some outputs",  # 2-d transposes only
        "your copy back runs only for some outputs",  # outputs without a storage offset only
        "your copy back runs only for some outputs",  # last stride != 1 taken for non-contiguous
        "uninitialised memory after an empty_like()",  # an empty_like temporary
        "call.output.set_(...)",  # set_ swaps the memory, like .data =
        "only part of the output",  # copies back the first row
        "nothing copied it into call.output",  # copies into an input instead
        "channels-last 4-d output",  # channels-last taken for contiguous: a strided buffer
        "at the start of the output's storage",  # copies back with the storage offset ignored
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_course_kernels_are_refused_and_the_same_pattern_written_out_passes():
    assert "course's own" in check("06.fix_addcmul", emps.output_placeholder).message

    def my_kernel(call):
        with call.output_placeholder(call.output) as output:
            call.run_graph(output, [call.placeholder(t) for t in call.inputs])

    assert check("06.fix_addcmul", my_kernel).passed


def test_a_course_kernel_called_inside_is_noticed_however_imported():
    from course.emps.mps_kernels import output_placeholder as imported

    def my_kernel(call):
        imported(call)

    verdict = check("06.fix_addcmul", my_kernel)
    assert not verdict.passed and "emps.output_placeholder" in verdict.message
    assert "do the gather, compute and scatter itself" in verdict.message


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
    verdict = fix.check_fix(get("06.fix_addcmul").reference())
    assert not verdict.passed and "encoder has not moved" in verdict.message


def test_fix_checker_leaves_the_process_backend_alone():
    before = emps.current_backend()
    fix.check_fix(get("06.fix_addcmul").reference())
    assert emps.current_backend() is before


def test_not_a_kernel():
    assert "kernel function" in check("06.fix_addcmul", 42).message
