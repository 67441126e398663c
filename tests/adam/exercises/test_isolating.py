"""03.isolate_op and 03.which_ops: a measured experiment, seen running, on hidden profiles."""

from __future__ import annotations

import torch

from course import emps
from course.adam.exercises import common, isolating
from course.adam.op_isolation import OP_CALLS
from course.exercises import check
from course.layout.named import laid_out
from tests.adam.exercises.corpus_isolating import CORPORA, isolate_on
from tests.corpus import corpus_tests

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_hidden_cases_vary_op_layouts_and_profile():
    cases = isolating.ISOLATIONS
    assert {c.op for c in cases} == set(isolating.OPS)
    assert len({c.output_layout for c in cases}) >= 4 and len({c.input_layout for c in cases}) >= 3
    assert len({c.profile.name for c in cases}) >= 8
    assert {"lerp", "addcdiv"} <= {f for c in cases for f in common.backend(c.profile).overrides}


def test_the_story_table_is_wrong_on_later_and_hidden_profiles():
    """A profile made for the check lists both families broken and loses nothing; another
    breaks addcmul_ alone: an answer from a list, a name or the story is wrong there. The
    backends made for the check lose a write (lerp_; mul_ where several kernels are broken),
    write part of it (addcdiv_'s first row only, lerp_'s all but the first row) or write it a
    last bit off (addcmul_); a contiguous output arrives even where several are broken."""
    later = [
        (case, isolating.expected_isolation(i))
        for i, case in enumerate(isolating.ISOLATIONS)
        if case.profile is not emps.TORCH_2_2_1
    ]
    made = {*common.HIDDEN_KERNELS, common.SEVERAL_LOST.name}
    assert {want for case, want in later if case.profile.name not in made} == {"updates"}
    assert common.STRIDED_LISTED.broken >= emps.ADAM_FAMILIES
    on_made = {(c.op, c.output_layout): want for c, want in later if c.profile.name in made}
    assert list(on_made.values()).count("lost") == 5
    assert on_made[("lerp_", "contiguous")] == "updates"


def test_the_partial_copy_back_writes_the_first_row_only():
    """The hidden kernel leaves most of the output unchanged and writes the rest right, so a
    comparison of element [0, 0] or of row 0 cannot see it, and neither can "did it change?"."""
    start = torch.randn(6, 4, generator=torch.Generator().manual_seed(3))
    expected = start.clone()
    OP_CALLS["addcdiv_"](expected, start, start.abs() + 1)
    out = laid_out(start, "transposed", emps.DEVICE)
    with emps.use_backend(common.backend(common.FIRST_ROW)):
        OP_CALLS["addcdiv_"](out, start.to(emps.DEVICE), (start.abs() + 1).to(emps.DEVICE))
    got = out.cpu()
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1:], start[1:])


def test_an_experiment_that_raises_is_told_which_case_and_why():
    verdict = check("03.isolate_op", isolate_on((6, 4), torch.float64))
    assert not verdict.passed and "your experiment raised TypeError" in verdict.message
    assert "float64" in verdict.message and "checking your answer" not in verdict.message


def test_which_ops_outcome_is_measured():
    assert isolating._which_ops() == "addcmul_ and addcdiv_"
