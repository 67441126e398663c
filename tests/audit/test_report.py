"""The auditor's summaries: flagged ops, counts, table rows and the per-layout grid."""

from __future__ import annotations

from course.audit.judge import VERDICTS, AuditResult
from course.audit.report import (
    flagged_figure,
    flagged_ops,
    grid_rows,
    summary,
    summary_line,
    table_rows,
    text_table,
)

RESULTS = [
    AuditResult(
        "aten::addcmul_", "transposed", "silent-no-write", "out unchanged", dtype="float32"
    ),
    AuditResult("aten::addcmul_", "contiguous", "ok", dtype="float32"),
    AuditResult("aten::add_.Tensor", "transposed", "wrong-values", "max err 2", dtype="float16"),
    AuditResult("aten::add_.Tensor", "transposed", "ok", dtype="float32"),
    AuditResult("aten::mul_", "expanded", "error", "boom", dtype="float32"),
    AuditResult("aten::lerp_", "transposed", "skipped", dtype="float32"),
]


def test_flagged_ops_drop_the_overload_and_keep_only_lost_or_wrong_writes():
    assert flagged_ops(RESULTS) == {"aten::addcmul_", "aten::add_"}
    assert flagged_ops([]) == set()


def test_summary_counts_each_verdict_and_leaves_skipped_ops_out_of_ops_run():
    counts = summary(RESULTS)
    assert counts["results"] == 6 and counts["ops_run"] == 3
    assert [counts[v] for v in VERDICTS] == [2, 1, 1, 1, 1]
    assert counts["flagged"] == ["aten::add_", "aten::addcmul_"]
    line = summary_line("cpu", counts)
    assert line.startswith("cpu: 3 ops run, 6 results (2 ok, 1 silent-no-write, 1 wrong-values")
    assert line.endswith("flagged: aten::add_, aten::addcmul_")
    assert summary_line("cpu", summary([])).endswith("flagged: none")


def test_table_rows_show_only_findings_unless_asked_and_detail_is_optional():
    findings = table_rows(RESULTS)
    assert [r["verdict"] for r in findings] == ["silent-no-write", "wrong-values", "error"]
    assert findings[0]["detail"] == "out unchanged"
    assert len(table_rows(RESULTS, only_findings=False)) == len(RESULTS)
    assert "detail" not in table_rows(RESULTS, detail=False)[0]
    assert "boom" in text_table(RESULTS) and "boom" not in text_table(RESULTS, detail=False)
    assert text_table(RESULTS[1:2]) == "(no findings)"


def test_grid_rows_put_layouts_down_and_dtypes_across_with_a_dash_where_nothing_ran():
    add = [r for r in RESULTS if r.op == "aten::add_.Tensor"]
    assert grid_rows(add) == [{"layout": "transposed", "float16": "wrong-values", "float32": "ok"}]
    assert grid_rows(RESULTS[:3])[1] == {"layout": "contiguous", "float32": "ok", "float16": "-"}


def test_the_figure_has_a_row_per_flagged_op_and_a_column_per_device():
    axes = flagged_figure({"emps": RESULTS, "cpu": RESULTS[1:2]}).axes[0]
    assert [t.get_text() for t in axes.get_yticklabels()] == ["aten::add_", "aten::addcmul_"]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["emps", "cpu"]
    assert axes.images[0].get_array().tolist() == [[1, 0], [1, 0]]
    empty = flagged_figure({"cpu": []}).axes[0]
    assert [t.get_text() for t in empty.get_yticklabels()] == ["(none)"]
