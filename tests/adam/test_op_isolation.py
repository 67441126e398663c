"""Each of Adam's four ops alone on a non-contiguous output: the story's table."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.adam.op_isolation import (
    CONDITIONS,
    OPS,
    by_layout,
    by_version,
    classify,
    isolate,
    isolation_table,
    on_profile,
    time_op,
    timing_rows,
    timing_summary,
)
from course.errors import CourseError
from course.tables import text_table


def test_story_table_on_the_buggy_profile():
    rows = {r["condition"]: r for r in isolation_table()}
    for op in ("lerp_", "mul_"):
        assert {rows[c][op] for c in CONDITIONS} == {"updates"}
        assert rows["result lost in a temporary"][op] == "no"
    for op in ("addcmul_", "addcdiv_"):
        assert rows["contiguous output"][op] == "updates"
        assert rows["non-contiguous inputs"][op] == "updates"  # only the output's layout matters
        assert rows["non-contiguous output, from 0"][op] == "stays 0: ambiguous"
        assert rows["non-contiguous output, from non-zero"][op] == "unchanged"  # writes nothing
        assert rows["result lost in a temporary"][op] == "yes"


def test_the_printed_table_fits_a_notebook_cell():
    assert max(len(line) for line in text_table(isolation_table()).splitlines()) <= 100


def test_fixed_profile_updates_everything():
    for row in isolation_table("fixed-macos14")[:-1]:
        assert {row[op] for op in OPS} == {"updates"}


def test_isolation_counts_the_temporary():
    result = isolate("addcmul_")
    assert result.lost_write and result.temporaries >= 1
    assert not isolate("addcmul_", output_layout="contiguous").lost_write


def test_classify_tells_zeros_from_nothing():
    before = torch.ones(3)
    expected = torch.full((3,), 2.0)
    assert classify(expected.clone(), before, expected) == "updates"
    assert classify(before.clone(), before, expected) == "unchanged"
    assert classify(torch.zeros(3), before, expected) == "writes zeros"
    assert classify(torch.zeros(3), torch.zeros(3), expected) == "stays 0: ambiguous"
    assert classify(torch.full((3,), 5.0), before, expected) == "wrong"


def test_other_named_layouts_of_the_output():
    assert isolate("addcdiv_", output_layout="step-sliced").verdict == "unchanged"
    assert isolate("addcmul_", output_layout="storage-offset").verdict == "updates"
    with pytest.raises(CourseError, match="layout"):
        isolate("addcmul_", output_layout="diagonal")


def test_on_profile_runs_any_experiment_on_another_profile():
    assert on_profile("macos15", lambda: emps.current_profile().name) == "macos15"
    assert emps.current_profile().name == emps.DEFAULT_PROFILE
    assert on_profile(emps.MACOS15, lambda: emps.current_profile()) is emps.MACOS15
    assert on_profile("fixed-macos14", lambda a, b: (emps.current_profile().name, a + b), 1, 2) == (
        "fixed-macos14",
        3,
    )


def test_bad_op_name():
    with pytest.raises(CourseError, match="addcmul_"):
        isolate("addcmul")


def test_timing_records_the_lost_work():
    """No timed assert: only that both layouts were measured and the broken one lost its result."""
    timing = time_op("addcdiv_", shape=(64, 32), repeats=3)
    assert timing.contiguous_ms > 0 and timing.transposed_ms > 0 and timing.transposed_lost
    assert not time_op("mul_", shape=(64, 32), repeats=3).transposed_lost
    assert set(OPS) == {"lerp_", "mul_", "addcmul_", "addcdiv_"}


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: isolate("mul_", shape=(10**5, 10**5)), "shape=\\(100000, 100000\\)"),
        (lambda: isolate("mul_", shape=(0, 3)), "shape=\\(0, 3\\)"),
        (lambda: isolate("mul_", seed="x"), "seed='x'"),
        (lambda: time_op("mul_", repeats=10**6), "repeats=1000000"),
    ],
)
def test_sizes_a_learner_types_are_bounded(call, match):
    with pytest.raises(CourseError, match=match):
        call()


def _row(op: str, ratio: float, lost: bool) -> dict[str, object]:
    return {"op": op, "ratio": ratio, "result lost": lost}


def test_the_timing_sentence_says_what_the_table_measured():
    """The notebook's timing claim is computed from its own table: a machine where the
    non-contiguous call is no slower is told so, never that it paid for its copies."""
    slower = timing_summary([_row("mul_", 2.3, False), _row("addcmul_", 2.0, True)])
    assert "slower: mul_ (2.30x), addcmul_ (2.00x)" in slower
    assert "addcmul_ computed their result and lost it" in slower
    mixed = timing_summary([_row("lerp_", 1.05, False), _row("addcdiv_", 0.7, True)])
    assert "about as fast: lerp_ (1.05x)" in mixed and "faster: addcdiv_ (0.70x)" in mixed
    assert "slower" not in mixed
    assert timing_summary([_row("mul_", 1.0, False)]).endswith("No call lost its result.")


def test_the_timing_sentence_reads_the_notebooks_table():
    summary = timing_summary(timing_rows(repeats=1))
    assert all(f"{op} (" in summary for op in OPS)
    assert "addcmul_ and addcdiv_ computed their result and lost it" in summary


def test_the_learners_tables_come_from_the_learners_functions():
    """What the text after exercises 2 and 3 reads is computed from the learner's own functions:
    a blank function shows 'not written yet', a failing one its exception, never a crash."""

    def isolate_op(op, output_layout, input_layout):
        return "lost" if op.startswith("addc") and output_layout == "transposed" else "updates"

    rows = {row["op"]: row for row in by_layout(isolate_op)}
    assert rows["addcmul_"]["transposed output"] == "lost"
    assert rows["addcmul_"]["transposed inputs"] == rows["mul_"]["transposed output"] == "updates"

    def blank(*args):
        raise NotImplementedError("your code here")

    assert {row["transposed output"] for row in by_layout(blank)} == {"not written yet"}
    versions = by_version(lambda p: {"addcdiv_", "addcmul_"} if "2.2.1" in p.label else set())
    assert [row["lost into a transposed output"] for row in versions][:2] == [
        "addcdiv_, addcmul_",
        "none",
    ]
    assert {row["lost into a transposed output"] for row in by_version(lambda p: 1 / 0)} == {
        "raised ZeroDivisionError"
    }
