"""The auditor's results, summarised: flagged ops, counts, tables and a picture per device.

Pure functions of a list of `AuditResult`s, so the CLI, the widget and the notebooks all show
the same numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from matplotlib.figure import Figure

from course.audit.judge import VERDICTS, AuditResult
from course.figures import describe, fitted_figure
from course.tables import text_table as format_table


def flagged_ops(results: Sequence[AuditResult]) -> set[str]:
    """The ops (overload names dropped) with at least one silent-no-write or wrong-values result."""
    return {r.op.split(".")[0] for r in results if r.flagged}


def summary(results: Sequence[AuditResult]) -> dict[str, object]:
    """Counts per verdict, the number of ops covered, and the flagged ops."""
    counts = Counter(r.verdict for r in results)
    covered = {r.op for r in results if r.verdict != "skipped"}
    return {
        "results": len(results),
        "ops_run": len(covered),
        **{v: counts.get(v, 0) for v in VERDICTS},
        "flagged": sorted(flagged_ops(results)),
    }


def table_rows(
    results: Sequence[AuditResult], only_findings: bool = True, detail: bool = True
) -> list[dict[str, str]]:
    """Rows for a table: by default only the findings (lost or wrong writes, errors)."""
    return [
        {"op": r.op, "dtype": r.dtype, "layout": r.layout, "verdict": r.verdict}
        | ({"detail": r.detail} if detail else {})
        for r in results
        if not only_findings or r.verdict not in ("ok", "skipped")
    ]


def grid_rows(results: Sequence[AuditResult]) -> list[dict[str, str]]:
    """One row per layout, one column per dtype: the verdicts of one op at a glance."""
    dtypes = list(dict.fromkeys(r.dtype for r in results))
    layouts = list(dict.fromkeys(r.layout for r in results))
    verdict = {(r.layout, r.dtype): r.verdict for r in results}
    return [
        {"layout": layout} | {dtype: verdict.get((layout, dtype), "-") for dtype in dtypes}
        for layout in layouts
    ]


def text_table(
    results: Sequence[AuditResult], only_findings: bool = True, detail: bool = True
) -> str:
    """A fixed-width text table of results (notebooks leave `detail` out to stay narrow)."""
    rows = table_rows(results, only_findings, detail)
    return format_table(rows, empty="(no findings)")


def summary_line(device: str, counts: dict[str, object]) -> str:
    """One line: how much ran, how many of each verdict, and which ops were flagged."""
    verdicts = ", ".join(f"{counts[v]} {v}" for v in VERDICTS)
    flagged = ", ".join(counts["flagged"]) or "none"
    return (
        f"{device}: {counts['ops_run']} ops run, {counts['results']} results ({verdicts}); "
        f"flagged: {flagged}"
    )


def flagged_figure(results_by_device: dict[str, Sequence[AuditResult]]) -> Figure:
    """A grid: ops flagged anywhere (rows) by device (columns), shaded by broken layouts."""
    ops = sorted(set().union(*(flagged_ops(r) for r in results_by_device.values()))) or ["(none)"]
    grid = [
        [
            sum(r.flagged and r.op.split(".")[0] == op for r in results)
            for results in results_by_device.values()
        ]
        for op in ops
    ]  # (ops, devices)
    # tall enough for the colour bar's label, however few ops are flagged
    fig = fitted_figure(150 + 120 * len(results_by_device), max(260, 80 + 28 * len(ops)))
    ax = fig.add_subplot()
    image = ax.imshow(grid, cmap="Reds", vmin=0, aspect="auto")
    darkest = max(max(row) for row in grid) or 1
    for row, counts in enumerate(grid):  # each cell says its number: never the shade alone
        for column, count in enumerate(counts):
            ink = "white" if count > darkest / 2 else "black"
            ax.text(column, row, str(count), ha="center", va="center", fontsize=10, color=ink)
    ax.set_xticks(range(len(results_by_device)), list(results_by_device), rotation=20)
    ax.set_yticks(range(len(ops)), ops)
    fig.colorbar(image, ax=ax, label="(overload, dtype, layout)\nresults flagged")
    ax.set_title("Where writes go wrong", fontsize=10)
    return describe(
        fig,
        "A grid of the ops flagged anywhere (rows) by device profile (columns); each cell shows "
        "how many of the op's (overload, dtype, layout) results were flagged there: "
        + "; ".join(
            f"{device}: "
            + (", ".join(f"{op} {n}" for op, n in zip(ops, column, strict=True) if n) or "none")
            for device, column in zip(results_by_device, zip(*grid, strict=True), strict=True)
        ),
    )
