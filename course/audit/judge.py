"""The auditor's verdicts: did a kernel write its non-contiguous output, and write it right?

`judge` compares an output after the call with its values before the call and with the
contiguous CPU reference. Deterministic ops must match the reference; random ops cannot (their
values legitimately depend on the layout, pytorch#166856), so they must overwrite every poisoned
element and follow the reference's distribution (a two-sample Kolmogorov-Smirnov test).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

VERDICTS = ("ok", "silent-no-write", "wrong-values", "error", "skipped")
BUGS = ("silent-no-write", "wrong-values")
COLOURS = {  # the widget's colour table
    "ok": "#d8f0d8",
    "silent-no-write": "#f6c7c7",
    "wrong-values": "#f9dfb5",
    "error": "#e3d0f0",
    "skipped": "#e6e6e6",
}
KS_THRESHOLD = 0.15  # two-sample Kolmogorov-Smirnov distance; same-distribution samples of 1536
# give ~0.03, a wrong distribution (zeros, a shifted mean) gives ~0.5 and more


def judge(
    before: torch.Tensor,
    after: torch.Tensor,
    expected: torch.Tensor,
    *,
    random: bool = False,
    rtol: float = 1e-4,
) -> tuple[str, str]:
    """Classify one output: (verdict, detail). Random ops are judged by coverage + distribution.

    `rtol` allows for another device's maths (a GPU's `tan` need not match the CPU's to the last
    bit); it never hides a lost write, which is judged by exact equality with `before`.
    """
    if random:
        return _judge_random(before, after, expected)
    observable = expected != before
    if _close(after, expected, rtol).all():
        return "ok", f"matches the reference ({int(observable.sum())} elements changed)"
    if torch.equal(after[observable], before[observable]):
        return "silent-no-write", f"all {int(observable.sum())} elements kept their old values"
    wrong = int((~_close(after, expected, rtol)).sum())
    return "wrong-values", f"{wrong} of {after.numel()} elements differ from the reference"


def _close(a: torch.Tensor, b: torch.Tensor, rtol: float) -> torch.Tensor:
    if not a.dtype.is_floating_point:
        return a == b
    return torch.isclose(a.double(), b.double(), rtol=rtol, atol=rtol / 10, equal_nan=True)


def _judge_random(before: torch.Tensor, after: torch.Tensor, expected: torch.Tensor):
    unwritten = int(torch.isnan(after).sum()) if before.isnan().all() else 0
    if unwritten == after.numel():
        return "silent-no-write", f"all {unwritten} elements still hold the NaN poison"
    if unwritten:
        return "wrong-values", f"{unwritten} of {after.numel()} elements never written"
    distance = ks_distance(after.flatten().double(), expected.flatten().double())
    if distance > KS_THRESHOLD:
        return "wrong-values", f"not the reference's distribution (KS {distance:.2f})"
    return "ok", f"every element written; distribution matches (KS {distance:.2f})"


def ks_distance(a: torch.Tensor, b: torch.Tensor) -> float:
    """Two-sample Kolmogorov-Smirnov statistic: the largest gap between the empirical CDFs."""
    a, b = a.sort().values, b.sort().values
    points = torch.cat([a, b])
    cdf_a = torch.searchsorted(a, points, right=True).double() / len(a)
    cdf_b = torch.searchsorted(b, points, right=True).double() / len(b)
    return (cdf_a - cdf_b).abs().max().item()


@dataclass(frozen=True)
class AuditResult:
    """One op on one layout: the verdict and the evidence for it."""

    op: str  # full aten name, e.g. "aten::addcmul_" or "aten::add_.Tensor"
    layout: str
    verdict: str
    detail: str = ""
    kind: str = "pointwise"
    dtype: str = ""

    @property
    def flagged(self) -> bool:
        """Whether this is a bug: the output was not written, or written wrongly."""
        return self.verdict in BUGS
