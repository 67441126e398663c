"""05.custom_op: hidden inputs that vary layout, dtype, rank, offset and beta; each wrong pair
told which side is at fault and why."""

from __future__ import annotations

import pytest
import torch

from course.dispatch.exercises import custom_op
from course.exercises import check, get
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "05.custom_op": (
        "wrote into its input avg_sq",  # mul_/addcmul_ on avg_sq
        "wrote into its input grad",  # mul_ on grad
        "not weighted by (1 - beta)",
        "beta = 0.9 whatever beta is",
        "allocate it like avg_sq",  # fake row-major, real keeps avg_sq's layout
        "row-major on every input",  # a .contiguous() in the real kernel
        "puts grad's term first",  # operand order, not a .contiguous()
        "returned its input avg_sq itself",
        "promises torch.float32, the real output is torch.float64",
        "gaps between rows included",  # the fake copies a slice's strides
        "allocates like grad",
        "allocates where its inputs are",
        "returned a view of its input avg_sq",  # view_as
        "returned a view of its input avg_sq",  # a[...]
        "returned a view of its input avg_sq",  # detach shares the memory
        "beta and (1 - beta) are swapped",
        "puts grad's term first",  # lerp(grad**2, avg_sq, beta): right values, grad's layout
        "wrote into its input avg_sq",  # .contiguous() is avg_sq itself when it is contiguous
        "beta = 0.999 whatever beta is",  # another constant than 0.9
        "allocate it like avg_sq",  # an explicitly row-major fake
        "returns torch.float32 for torch.float64",  # .float() in the real kernel
        "computes in float32 and returns torch.float64",  # float32 arithmetic, cast back
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_operand_order_is_not_blamed_on_a_contiguous_call():
    operand_order = check("05.custom_op", get("05.custom_op").wrong_answers[6]())
    assert ".contiguous()" not in operand_order.message
    contiguous = check("05.custom_op", get("05.custom_op").wrong_answers[5]())
    assert "grad's term" not in contiguous.message and "empty_like" not in contiguous.message


def test_inputs_vary_every_parameter_of_the_schema():
    cases = custom_op.inputs()
    assert len({c.beta for c in cases}) == len(cases)
    assert {c.avg_sq.dtype for c in cases} == {torch.float32, torch.float64}
    assert any(c.avg_sq.dim() > 2 for c in cases)
    assert any(c.avg_sq.storage_offset() > 0 for c in cases)
    assert any(not c.avg_sq.is_contiguous() for c in cases)
    assert any(c.grad.stride() != c.avg_sq.stride() for c in cases)


def test_any_consistent_pair_passes():
    def grad_first(a, g, b):
        return (1 - b) * g * g + b * a

    def row_major(a, g, b):
        return custom_op.formula(a, g, b).contiguous()

    assert check("05.custom_op", (grad_first, grad_first)).passed  # the fake runs it on meta
    assert check("05.custom_op", (row_major, lambda a, g, b: a.new_empty(a.shape))).passed


def test_the_learner_gets_copies_with_the_same_layout_and_offset():
    sliced = custom_op.inputs()[3].avg_sq
    copy = custom_op._copy_layout(sliced)
    assert copy.stride() == sliced.stride() and copy.storage_offset() == sliced.storage_offset()
    assert torch.equal(copy, sliced) and copy.data_ptr() != sliced.data_ptr()
    fake = custom_op._meta_like(sliced)
    assert fake.device.type == "meta" and fake.storage_offset() == sliced.storage_offset()


def test_another_rounding_of_the_formula_passes():
    """Exact to a few roundings of the inputs' dtype, not to one order of operations."""
    fake = custom_op._fresh
    for cpu in (
        lambda a, g, b: torch.lerp(a, g * g, 1 - b),
        lambda a, g, b: torch.addcmul(b * a, g, g, value=1 - b),
        lambda a, g, b: (b * a.double() + (1 - b) * g.double() ** 2).to(a.dtype),
    ):
        assert check("05.custom_op", (cpu, fake)).passed
