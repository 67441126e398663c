"""`python -m course audit`: the layout auditor on the command line, as a table or as JSON.

Apart from the sweep (`course.audit.engine`) and its widget (`course.audit.panel`) so that the
command runs, and answers `--help`, on a machine without ipywidgets.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from dataclasses import asdict

import torch

from course.audit.args import DTYPES
from course.audit.engine import LAYOUTS, audit, target
from course.audit.judge import AuditResult
from course.audit.knobs import INPUTS
from course.audit.report import summary, summary_line, text_table
from course.errors import CourseError
from course.layout.named import ALIASES


def report(results: list[AuditResult], device: str) -> dict[str, object]:
    """The machine-readable report (`--json`): versions, device, summary, every result."""
    return {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": device,
        "summary": summary(results),
        "results": [asdict(r) for r in results],
    }


def cli(argv: list[str]) -> int:
    """`python -m course audit --device ... [--json] [--layout ...] [--dtype ...] [--op ...]`."""
    parser = argparse.ArgumentParser(prog="python -m course audit", description=cli.__doc__)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, mps, emulated[:PROFILE]")
    parser.add_argument(
        "--layout",
        action="append",
        choices=[*LAYOUTS, *ALIASES],
        help="only this layout (repeatable)",
    )
    parser.add_argument("--dtype", action="append", choices=list(DTYPES), help="only this dtype")
    parser.add_argument("--op", action="append", help="audit only this op (repeatable)")
    parser.add_argument("--shape", help="the written tensors' shape, e.g. 300,70 (knobs)")
    parser.add_argument("--scalar", action="append", type=float, help="a scalar (repeatable)")
    parser.add_argument("--inputs", choices=list(INPUTS), default="fresh", help="operands")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--all", action="store_true", help="list ok results too")
    options = parser.parse_args(argv)

    def progress(done: int, total: int, note: str) -> None:
        print(f"\r[{done}/{total}] {note:<40}", end="" if done < total else "\n", file=sys.stderr)

    try:
        missing = target(options.device).unavailable
        results = (
            []
            if missing
            else audit(
                options.device,
                options.op,
                options.layout,
                options.dtype,
                progress=progress,
                shape=_shape_flag(options.shape),
                scalars=tuple(options.scalar) if options.scalar else None,
                inputs=options.inputs,
            )
        )
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if missing:  # one clear line, not a table of identical skips
        print(f"{options.device}: skipped, {missing}")
        return 0
    if options.json:
        print(json.dumps(report(results, options.device), indent=2))
        return 0
    print(text_table(results, only_findings=not options.all))
    print(summary_line(options.device, summary(results)))
    return 0


def _shape_flag(text: str | None) -> tuple[int, ...] | None:
    """ "300,70" -> (300, 70); the knob checks the numbers."""
    if text is None:
        return None
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise CourseError(
            f"--shape {text!r}: give whole numbers separated by commas, e.g. 300,70"
        ) from None
