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
        "A tolerant comparison (allclose",
        "only part of the result arrived",  # out[0, 0] == expected[0, 0]
        "only part of the result arrived",  # the first row compared
        "only part of the result arrived",  # "did it change?" instead of "is it the answer?"
        "from a sum or a mean",
        "read from the op's or the layout's name",
        "a lost write is lost twice",  # the expected answer made on the device, same layout
        "the op changes nothing",  # all ones
        ".to(device) of a tensor with gaps",
        "Use at least 2 rows and 2 columns",  # (1, 4) tensors: "transposed" stays contiguous
        "started at zeros",  # compared bitwise, but a lost mul_ leaves zeros as they were
        "not with the CPU's bits",  # torch.allclose with its default tolerance
        "only part of the result arrived",  # the last row compared
        "a cache",  # functools.cache: the profile changed, the answer did not
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_hidden_cases_vary_op_layouts_and_profile():
    cases = isolating.ISOLATIONS
    assert {c.op for c in cases} == set(isolating.OPS)
    assert len({c.output_layout for c in cases}) >= 4 and len({c.input_layout for c in cases}) >= 3
    assert len({c.profile.name for c in cases}) >= 8
    assert {"lerp", "addcdiv"} <= {f for c in cases for f in isolating.backend(c.profile).overrides}


def test_the_story_table_is_wrong_on_later_and_hidden_profiles():
    """A profile made for the check lists both families broken and loses nothing; another
    breaks addcmul_ alone: an answer from a list, a name or the story is wrong there. The
    backends made for the check lose a write (lerp_; mul_ where several kernels are broken),
    write part of it (addcdiv_'s first row only, lerp_'s all but the first row) or write it a
    last bit off (addcmul_); a contiguous output arrives even where several are broken."""
    later = [
        (case, isolating._expected_isolation(i))
        for i, case in enumerate(isolating.ISOLATIONS)
        if case.profile is not emps.TORCH_2_2_1
    ]
    made = {*isolating.HIDDEN_KERNELS, isolating.SEVERAL_LOST.name}
    assert {want for case, want in later if case.profile.name not in made} == {"updates"}
    assert isolating.STRIDED_LISTED.broken >= emps.ADAM_FAMILIES
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
    with emps.use_backend(isolating.backend(isolating.FIRST_ROW)):
        OP_CALLS["addcdiv_"](out, start.to(emps.DEVICE), (start.abs() + 1).to(emps.DEVICE))
    got = out.cpu()
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1:], start[1:])


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


def _isolate_on(shape: tuple[int, ...], dtype: torch.dtype = torch.float32):
    """The reference experiment on tensors of another shape or dtype."""

    def isolate_op(op, output_layout, input_layout):
        tensors = isolating._random_inputs(shape, seed=2, dtype=dtype)
        return isolating._measured(op, tensors, output_layout, input_layout)

    return isolate_op


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (2, 3, 4), (2, 2, 2, 3)])
def test_an_experiment_on_other_shapes_passes(shape):
    """laid_out's "transposed" of a 3-D tensor reverses every dim: a non-contiguous output."""
    assert check("03.isolate_op", _isolate_on(shape)).passed


def test_a_one_dim_experiment_is_told_it_never_varied_the_layout():
    verdict = check("03.isolate_op", _isolate_on((24,)))
    assert not verdict.passed and "a 1-D tensor laid out as asked stays contiguous" in (
        verdict.message
    )


def test_an_experiment_that_raises_is_told_which_case_and_why():
    verdict = check("03.isolate_op", _isolate_on((6, 4), torch.float64))
    assert not verdict.passed and "your experiment raised TypeError" in verdict.message
    assert "float64" in verdict.message and "checking your answer" not in verdict.message


def test_which_ops_outcome_is_measured():
    assert isolating._which_ops() == "addcmul_ and addcdiv_"
