"""The auditor's verdicts: did a kernel write its output, and write it right?

`judge` compares an output after the call with its values before the call and with what was
expected. Deterministic ops must match the expected values (to a tolerance that suits the dtype);
random ops cannot (their values legitimately depend on the layout, pytorch#166856), so they must
overwrite every poisoned element and follow the law their arguments define
(`course.audit.distributions`), whatever the kernel under audit does elsewhere. Either way, a
kernel that wrote outside its output's view (into the guard slots around it) is wrong.

Note [Unchanged is not the same as equal]
    "Wrote nothing" means the output still holds, bit for bit, what it held before. Two things
    make the naive test wrong: NaN != NaN, so a NaN-poisoned output that was never written is not
    `==` to itself; and an op may legitimately leave some elements as they were (`clamp_` on
    values already inside the bounds), so "some elements unchanged" proves nothing. `unchanged`
    is therefore NaN-aware and exact, the verdict asks whether *every* element is unchanged, and
    only after the output failed to match the expected values.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from course.audit.distributions import Law, detectable, misfits
from course.errors import CourseError

VERDICTS = ("ok", "silent-no-write", "wrong-values", "error", "skipped")
BUGS = ("silent-no-write", "wrong-values")
COLOURS = {  # the widget's colour table
    "ok": "#d8f0d8",
    "silent-no-write": "#f6c7c7",
    "wrong-values": "#f9dfb5",
    "error": "#e3d0f0",
    "skipped": "#e6e6e6",
}
# (rtol, atol) against a float64 reference rounded to the dtype: a few units in the last place
TOLERANCE = {torch.float32: (1e-4, 1e-5), torch.float16: (4e-3, 1e-3), torch.bfloat16: (3e-2, 1e-2)}


def unchanged(after: torch.Tensor, before: torch.Tensor) -> torch.Tensor:
    """Per element: still exactly the old value (NaN counts as unchanged NaN)."""
    same = after == before
    if after.dtype.is_floating_point:
        same |= after.isnan() & before.isnan()
    return same


def close(a: torch.Tensor, b: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    """Per element: equal up to the dtype's tolerance times `scale` (NaN equals NaN)."""
    if not a.dtype.is_floating_point:
        return a == b
    rtol, atol = TOLERANCE.get(a.dtype, (1e-6, 1e-7))
    return torch.isclose(
        a.double(), b.double(), rtol=rtol * scale, atol=atol * scale, equal_nan=True
    )


def judge(
    before: torch.Tensor,
    after: torch.Tensor,
    expected: torch.Tensor | Law,
    *,
    outside: int = 0,
    scale: float = 1.0,
) -> tuple[str, str]:
    """Classify one output: (verdict, detail).

    `expected` is the values a deterministic op must produce, or the `Law` a random op's values
    must follow. `outside` counts storage slots around the output's view that changed: any is
    wrong. `scale` loosens the tolerance for another device's maths (a GPU's `tan` need not match
    the CPU's to the last bit); it never hides a lost write, which is judged by exact equality.
    """
    if isinstance(expected, Law):
        verdict, detail = _judge_random(before, after, expected)
    else:
        verdict, detail = _judge_values(before, after, expected, scale)
    if outside:
        return "wrong-values", f"wrote {outside} storage slots outside its view; {detail}"
    return verdict, detail


def _judge_values(before: torch.Tensor, after: torch.Tensor, expected: torch.Tensor, scale: float):
    right = close(after, expected, scale)
    if right.all():
        return "ok", f"matches the reference ({int((~unchanged(expected, before)).sum())} changed)"
    kept = unchanged(after, before)
    if kept.all():
        return "silent-no-write", f"all {after.numel()} elements kept their old values"
    wrong = int((~right).sum())
    lost = int((kept & ~right).sum())  # should have changed, still old
    also = f", {lost} of them still hold their old values" if lost else ""
    return "wrong-values", f"{wrong} of {after.numel()} elements differ from the reference{also}"


def _judge_random(before: torch.Tensor, after: torch.Tensor, law: Law):
    unwritten = int(unchanged(after, before).sum())
    if unwritten == after.numel():
        return "silent-no-write", f"all {unwritten} elements still hold the poison"
    if unwritten:
        return "wrong-values", f"{unwritten} of {after.numel()} elements never written"
    problems = misfits(after, law)
    if problems:
        return "wrong-values", "; ".join(problems)
    return "ok", (
        f"every element written; the values follow {law.name} ({detectable(after.numel())})"
    )


def ks_distance(a: torch.Tensor, b: torch.Tensor) -> float:
    """Two-sample Kolmogorov-Smirnov statistic: the largest gap between the empirical CDFs.

    Notebook 08 uses it to show that a contiguous and a transposed `normal_` draw the same
    distribution in another order; the auditor itself tests against the law (one sample).

    One sort of both samples; each element steps the difference of the two CDFs (scaled by
    len(a) * len(b) to stay in exact integers), read at the last of each run of equal values.
    A sample is its elements, whatever the shape: a 2-D draw is compared as its flat values.
    """
    a, b = _sample(a, "a"), _sample(b, "b")
    values = torch.cat([a, b])
    steps = torch.cat(
        [torch.full((len(a),), len(b), dtype=torch.int64), torch.full((len(b),), -len(a))]
    )
    order = values.argsort(stable=True)
    values, gap = values[order], steps[order].cumsum(0)
    last = torch.ones_like(values, dtype=torch.bool)
    last[:-1] = values[1:] != values[:-1]
    return gap[last].abs().max().item() / (len(a) * len(b))


def _sample(values: object, name: str) -> torch.Tensor:
    """`values` as a flat real sample, or a CourseError saying what ks_distance needs."""
    if not isinstance(values, torch.Tensor) or values.is_complex() or values.numel() == 0:
        raise CourseError(
            f"ks_distance({name}=...) needs a non-empty tensor of real numbers (any shape), "
            f"got {type(values).__name__}"
            + (
                f" of {values.numel()} {values.dtype} values"
                if isinstance(values, torch.Tensor)
                else ""
            )
        )
    return values.detach().flatten().cpu()


@dataclass(frozen=True)
class AuditResult:
    """One op, dtype and layout: the verdict, the evidence, and a line that reproduces it."""

    op: str  # full aten name of the in-place op, e.g. "aten::addcmul_" or "aten::add_.Tensor"
    layout: str  # "transposed", ..., "expanded" (stride-0 inputs), "out=transposed"
    verdict: str
    detail: str = ""
    kind: str = "pointwise"
    dtype: str = ""
    reproduction: str = ""  # one pasteable line, for findings (flagged or error)

    @property
    def flagged(self) -> bool:
        """Whether this is a bug: the output was not written, or written wrongly."""
        return self.verdict in BUGS
