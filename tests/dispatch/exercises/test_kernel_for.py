"""05.kernel_for: variants from the live registry, and each wrong rule told its own mistake."""

from __future__ import annotations

from course.dispatch.exercises import kernel_for
from course.dispatch.registry import backend_kernel, lookup
from course.exercises import check
from tests.corpus import (
    corpus_tests,
    reference,
)
from tests.dispatch.exercises.corpus_kernel_for import CORPORA

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_a_backend_without_a_kernel_is_asked_about():
    """The hidden calls include backends the registry names no kernel for (else a silent
    fallback to CPU's kernel would pass), and the truth there is 'no kernel'."""
    missing = [case for case in kernel_for.cases() if case not in kernel_for.variants()]
    assert missing and all(kernel_for._truth(case) is None for case in missing)
    assert {lookup(op).structured_delegate is None for op, _ in missing} == {True, False}


def test_a_miss_shows_the_kernel_expected():
    """The feedback's `expected:` line names the registry's kernel, never blank."""
    verdict = check("05.kernel_for", lambda op, backend: "addcmul_out_mps")
    assert verdict.expected


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
        by_op.setdefault(op, set()).add(reference("05.kernel_for")(op, backend))
    assert any(len(kernels) > 1 for kernels in by_op.values())  # the backend picks the kernel


def test_the_truth_is_the_reference_walk_on_every_variant():
    walk = reference("05.kernel_for")
    assert all(backend_kernel(*case) == walk(*case) for case in kernel_for.variants())


def test_a_function_is_asked_for_by_name():
    assert "give a function" in check("05.kernel_for", "addcmul_out_mps").message
