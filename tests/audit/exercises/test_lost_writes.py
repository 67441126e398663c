"""08.lost_writes: each known wrong answer fails with its cause, on backends no cell printed."""

from __future__ import annotations

import pytest

from course import emps
from course.audit import exercises  # registers 08's exercises (without importing every lesson)
from course.audit.core import audit
from course.exercises import check, get
from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
LOST_WRITES_CAUSES = (
    "written down",  # the 2.4 set, as printed in the notebook
    "read from the profile",  # backend.profile.broken
    "wrong values are a lost write too",  # only silent-no-write counted
    "overload names",  # aten::add_.Tensor kept
    "aten::mul_ (error)",  # errors counted
    "(skipped)",  # everything but ok counted
    "every output your audit wrote was contiguous",  # contiguous layout
    "every output your audit wrote was contiguous",  # storage-offset layout: contiguous too
    "default profile (2.2.1)",  # backend not passed to audit
    "nothing ran on the emulated device",  # audited the CPU
    "never ran aten::addcdiv_",  # int64: addcdiv_ has no integer kernel
    "never ran aten::lerp_",  # only the story's ops audited
    "summary(...)['flagged']",  # the report's summary
    "result.flagged",  # each result's flagged property
    "every output your audit wrote was contiguous",  # expanded: only inputs are strided
    "the contiguous one too",  # ops that also fail on a contiguous output left out
    "it has no float64",  # float64: the emulated MPS refuses every call
    "reads the auditor's own BUGS",  # r.verdict in course.audit.judge.BUGS
)


@pytest.mark.parametrize(
    ("name", "index", "cause"), corpus_cases({"08.lost_writes": LOST_WRITES_CAUSES})
)
def test_each_wrong_answer_is_told_its_own_mistake(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_lost_writes_wants_a_function_and_a_set_of_names():
    assert "pass your function" in check("08.lost_writes", {"aten::normal_"}).message
    verdict = check("08.lost_writes", lambda backend: "normal_")
    assert not verdict.passed and "returned str 'normal_'" in verdict.message


def test_lost_writes_wants_names_not_results():
    def results(backend):
        found = audit("emulated", layouts="transposed", dtypes="float32", backend=backend)
        return [r for r in found if r.verdict in ("silent-no-write", "wrong-values")]

    verdict = check("08.lost_writes", results)
    assert not verdict.passed and "returned AuditResult objects, not names" in verdict.message


def test_lost_writes_accepts_names_without_the_aten_prefix():
    reference = get("08.lost_writes").reference()
    bare = check("08.lost_writes", lambda b: {op.removeprefix("aten::") for op in reference(b)})
    assert bare.passed, bare.message


def test_the_hidden_backends_lose_what_their_kernels_say():
    lost = {
        label: exercises.lost_writes._lost_on(label) for label in exercises.lost_writes._backends()
    }
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

    def lost_writes(backend):
        results = audit("emulated", layouts="transposed", dtypes="float32", backend=backend)
        return {r.op.split(".")[0] for r in results if r.verdict in lost}

    assert not exercises.lost_writes._reads_bugs(lost_writes)
    assert exercises.lost_writes._reads_bugs(get("08.lost_writes").wrong_answers[-1]())


def _sorted_list_partitioned(backend):
    results = audit("emulated", layouts=["transposed"], dtypes=["float32"], backend=backend)
    lost = {"silent-no-write", "wrong-values"}
    return sorted({r.op.partition(".")[0] for r in results if r.verdict in lost})


def _neither_ok_nor_error_nor_skipped(backend):
    found = set()
    for r in audit("emulated", layouts="transposed", dtypes="float32", backend=backend):
        if r.verdict not in ("ok", "error", "skipped"):
            found.add(r.op.split(".", 1)[0])
    return found


def _two_strided_layouts(backend):
    layouts = ["transposed", "out=transposed"]
    results = audit("emulated", layouts=layouts, dtypes="float32", backend=backend)
    return {r.op.split(".")[0] for r in results if r.verdict in ("silent-no-write", "wrong-values")}


@pytest.mark.parametrize(
    "lost_writes",
    [_sorted_list_partitioned, _neither_ok_nor_error_nor_skipped, _two_strided_layouts],
)
def test_right_answers_in_other_styles_pass(lost_writes):
    verdict = check("08.lost_writes", lost_writes)
    assert verdict.passed, verdict.message
