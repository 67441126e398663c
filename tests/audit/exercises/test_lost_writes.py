"""08.lost_writes: each known wrong answer fails with its cause, on backends no cell printed;
right answers written other ways pass."""

from __future__ import annotations

from course import emps
from course.audit.core import audit
from course.audit.exercises import lost_writes
from tests.audit.exercises.corpus_lost_writes import CORPORA, bugs_borrowed
from tests.corpus import corpus_tests

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_hidden_backends_lose_what_their_kernels_say():
    lost = {label: lost_writes._lost_on(label) for label in lost_writes._backends()}
    assert list(lost.values()) == [
        {"aten::addcdiv_", "aten::bernoulli_"},
        set(),
        {"aten::lerp_"},
        set(),
        {f"aten::{family}_" for family in emps.RANDOM_FAMILIES},
        {"aten::sub_"},
    ]


def test_a_tuple_of_ones_own_is_not_the_auditors_bugs():
    lost = ("silent-no-write", "wrong-values")

    def own(backend):
        results = audit("emulated", layouts="transposed", dtypes="float32", backend=backend)
        return {r.op.split(".")[0] for r in results if r.verdict in lost}

    assert not lost_writes._reads_bugs(own)
    assert lost_writes._reads_bugs(bugs_borrowed())
