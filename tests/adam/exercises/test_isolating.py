"""03.isolate_op and 03.which_ops: a measured experiment, seen running, on hidden profiles."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.adam.exercises import isolating
from course.adam.op_isolation import OP_CALLS
from course.exercises import check
from course.layout.named import laid_out
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "03.isolate_op": (
        "ran no lerp_ at all",  # the story's table
        "only on the CPU",
        "never varied the output's layout",  # into a contiguous copy
        "started at zeros",
        "swapped",
        "never varied the inputs",
        "ran on the 2.2.1-macos14 profile, not the one in force",  # sets the story's profile
        "the other way round",
        "course.adam.op_isolation.isolate, the course's own experiment",
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_hidden_cases_vary_op_layouts_and_profile():
    cases = isolating.ISOLATIONS
    assert {c.op for c in cases} == set(isolating.OPS)
    assert len({c.output_layout for c in cases}) >= 4 and len({c.input_layout for c in cases}) >= 3
    assert len({c.profile.name for c in cases}) >= 6


def test_the_story_table_is_wrong_on_later_and_hidden_profiles():
    """A profile made for the check lists both families broken and loses nothing; another
    breaks addcmul_ alone: an answer from a list, a name or the story is wrong there."""
    later = {
        i: isolating._expected_isolation(i)
        for i, case in enumerate(isolating.ISOLATIONS)
        if case.profile is not emps.TORCH_2_2_1
    }
    assert set(later.values()) == {"updates"}
    assert isolating.STRIDED_LISTED.broken >= emps.ADAM_FAMILIES


def test_isolate_op_wants_one_of_two_words():
    verdict = check("03.isolate_op", lambda op, out, inp: "unchanged")
    assert not verdict.passed and "'updates', 'lost'" in verdict.message


def test_an_experiment_that_compares_with_an_emulated_contiguous_run_passes():
    """Another honest design: the expected answer from a contiguous output on the device."""

    def isolate_op(op, output_layout, input_layout):
        gen = torch.Generator().manual_seed(4)
        start, a, b = (torch.rand(5, 3, generator=gen) + 1 for _ in range(3))
        reference = laid_out(start, "contiguous", emps.DEVICE)
        OP_CALLS[op](reference, a.to(emps.DEVICE), b.to(emps.DEVICE))
        out = laid_out(start, output_layout, emps.DEVICE)
        OP_CALLS[op](out, *(laid_out(t, input_layout, emps.DEVICE) for t in (a, b)))
        return "updates" if torch.equal(out.cpu(), reference.cpu()) else "lost"

    assert check("03.isolate_op", isolate_op).passed


def test_which_ops_outcome_is_measured():
    assert isolating._which_ops() == "addcmul_ and addcdiv_"
