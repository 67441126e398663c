"""05.kernel_for: variants from the live registry, and each wrong rule told its own mistake."""

from __future__ import annotations

import pytest

from course.dispatch.exercises import kernel_for
from course.dispatch.registry import lookup
from course.exercises import check, get
from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
CAUSES = {
    "05.kernel_for": (
        "has no `dispatch:` row for MPS of its own",  # own table only
        "the overload addcdiv_ delegates to",  # the delegate's name
        "follows structured_delegate whatever the op",  # always the delegate
        "a row of its own, and that row wins",  # the delegate even where the op has its own row
        "names several backends",  # .dispatch looked up by one backend
        "inside a longer backend name",  # 'CPU' in 'SparseCPU, ...'
        "never changes with `backend`",  # always the CPU row
        "the same for every one",  # the name the notebook printed
        "never changes with `op`",  # always addcmul.out's row
        "called backend_kernel, the course's own reader",
        "called kernel_entry, the course's own reader",
        "has no `dispatch:` row for CUDA of its own",  # own table whenever it has one
        "names several backends",  # 'CPU, CUDA'.split(',') without strip
        "a row of its own, and that row wins",  # the delegate's row first, the op's as fallback
        "addcdiv.out's kernel for CPU, not for MPS",  # the delegate's CPU row, whatever backend
        "addcmul.out's kernel for MPS, not for CPU",  # the delegate's MPS row, whatever backend
        "not built from the op's and the backend's",  # a name made up, not read
        "the kernel is in the row of its structured_delegate",  # .get(backend) gives None
        "has no default overload",  # the overload stripped from the op's name
        "not built from the op's name",  # the delegate guessed as <op>.out
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_variants_vary_the_op_and_the_backend_and_every_kind_of_entry():
    variants = kernel_for.variants()
    assert ("addcdiv_", "MPS") in variants and len(variants) >= 12
    ops = {op for op, _ in variants}
    backends = {backend for _, backend in variants}
    assert len(ops) >= 6 and {"CPU", "MPS", "SparseCPU"} <= backends
    delegates = {bool(lookup(op).structured_delegate) for op in ops}
    assert delegates == {True, False}  # delegates, ops with their own table, and add.out itself
    own_row_wins = [
        (op, b)
        for op, b in variants
        if lookup(op).structured_delegate and b in lookup(op).backend_kernels()
    ]
    assert own_row_wins  # a delegate that names its own kernel for some backend
    by_op: dict[str, set[str]] = {}
    for op, backend in variants:
        by_op.setdefault(op, set()).add(get("05.kernel_for").reference()(op, backend))
    assert any(len(kernels) > 1 for kernels in by_op.values())  # the backend picks the kernel


def test_a_function_is_asked_for_by_name():
    assert "give a function" in check("05.kernel_for", "addcmul_out_mps").message


def test_the_course_helper_is_named_however_it_is_wrapped():
    from course.dispatch.registry import backend_kernel

    def mine(op, backend):
        return backend_kernel(op, backend)

    assert "backend_kernel, the course's own reader" in check("05.kernel_for", mine).message
