"""Notebook 08's checkers: each known wrong answer fails, and the feedback names its real cause."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.audit import exercises  # registers 08's exercises (without importing every lesson)
from course.audit.core import audit
from course.audit.judge import ks_distance
from course.exercises import check, get, predict, reveal
from tests.corpus import assert_told_its_cause, corpus_cases

# The words each wrong answer's feedback must contain, in the order of `wrong_answers`.
VERDICT_CAUSES = (
    "does not turn to zeros",  # "all zeros" taken for "never written"
    "a write happened, a wrong one",  # anything not exactly expected called unwritten
    "NaN == NaN is False",  # unchanged tested with ==
    "*every* element kept its value",  # one unchanged element taken for a lost write
    "the right answer itself has NaN",  # allclose without equal_nan
    "3% off",  # rtol=0.05
    "cannot see a scramble",  # sorted values compared
    "comparing one element or the first rows",  # first row compared
    "NaN was written over numbers",  # NaN garbage taken for unchanged
    "not exact equality",  # bitwise comparison with another kernel's answer
    "(nan_to_num) makes the poison look like the right answer",  # NaN -> 0, then allclose
    "(nan_to_num) makes it look unchanged",  # NaN -> 0, then unchanged
    "an absolute tolerance such as atol=1e-3",  # atol=1e-3
    "a tolerance that lets 0.2% pass",  # 1% relative
    "compare with before bit for bit",  # allclose(after, before) for unchanged
    "Sums, means and sorted values of before",  # sums compared for unchanged
    "silent-no-write means not one element changed",  # 90% unchanged taken for unchanged
    "not only for a poison that fills the output",  # NaN-aware only when before is all NaN
    "skips the elements where expected is NaN",  # allclose where expected is a number
    "such as rtol=1e-3",  # 0.1% relative
    "a max difference under 1e-4",  # an absolute bound on the largest difference
    "the auditor's own course.audit.judge.judge",  # the course's judge, wrapped
)
RANDOM_CAUSES = (
    "pytorch#166856",  # exact values compared with the sample
    "sorted or not",  # sorted values compared
    "NaN == NaN is False",  # unwritten tested with ==
    "smallest value, not NaN",  # unwritten tested with isnan only
    "'silent-no-write' means none was",  # any unwritten element called silent-no-write
    "'ok' needs every element written",  # unwritten elements ignored
    "coverage alone is not enough",  # no distribution test
    "not its mean",  # means compared
    "too loose",  # KS threshold 0.5
    "mean 0 and standard deviation 1",  # a test for the standard normal only
    "not int64's smallest value",  # the poison hard-coded as int64's minimum
    "not with isnan",  # partial writes found with isnan only
    "however few were",  # mostly unwritten called silent-no-write
    "a mean and a spread are not a distribution",  # mean and std compared
    "keep the threshold at 0.1",  # KS threshold 0.3
    "or a normal draw of your own",  # KS against a normal draw, not the sample
    "an integer output needs the distribution test too",  # ints fully written taken for ok
    "a negative draw is no poison",  # int poison taken to be any negative value
    "the auditor's own course.audit.judge.unchanged",  # the course's unwritten test
)
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


CAUSES = {
    "08.verdict": VERDICT_CAUSES,
    "08.random_verdict": RANDOM_CAUSES,
    "08.lost_writes": LOST_WRITES_CAUSES,
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_own_mistake(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_a_judge_that_returns_something_else_is_told_the_three_verdicts():
    verdict = check("08.verdict", lambda before, after, expected: True)
    assert not verdict.passed
    assert "return 'ok', 'silent-no-write' or 'wrong-values'" in verdict.message


def test_the_random_judge_cases_are_far_from_any_sensible_threshold():
    """Correct draws stay well under KS 0.1 and wrong ones well over 0.2, so the prompt's 0.1
    (or a learner's 0.15 or 0.2) decides every case the same way."""
    for label, case in exercises._random_cases().items():
        if case.after.isnan().any() or bool((case.after == case.before).any()):
            continue
        distance = ks_distance(case.after.flatten().double(), case.expected.flatten().double())
        assert distance < 0.06 if case.want == "ok" else distance > 0.25, (label, distance)


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
    lost = {label: exercises._lost_on(label) for label in exercises._backends()}
    assert list(lost.values()) == [
        {"aten::addcdiv_", "aten::bernoulli_"},
        set(),
        {"aten::lerp_"},
        set(),
        {f"aten::{family}_" for family in emps.RANDOM_FAMILIES},
        {"aten::sub_"},
    ]


def test_the_layout_prediction_runs_the_real_audit():
    predict("08.which_layouts", "every layout")
    # whitespace joined: the reveal is wrapped to the cell's width, wherever the line breaks fall
    # (the learner's earlier prediction, if one was committed, makes the line longer)
    shown = " ".join(str(reveal("08.which_layouts")).split())
    assert "the experiment says 'every non-contiguous output'" in shown


def test_a_judge_that_raises_is_told_on_which_output():
    def subtracts(before, after, expected):
        if after.dtype == torch.int64:
            raise TypeError("no ints here")
        return exercises._reference_verdict()(before, after, expected)

    verdict = check("08.verdict", subtracts)
    assert "for an integer output the op never wrote your function raised TypeError" in (
        verdict.message
    )


def test_a_tuple_of_ones_own_is_not_the_auditors_bugs():
    lost = ("silent-no-write", "wrong-values")

    def lost_writes(backend):
        results = audit("emulated", layouts="transposed", dtypes="float32", backend=backend)
        return {r.op.split(".")[0] for r in results if r.verdict in lost}

    assert not exercises._reads_bugs(lost_writes)
    assert exercises._reads_bugs(get("08.lost_writes").wrong_answers[-1]())
