"""What a user notices, measured: the buggy run against the same run on a CPU, in their words.

The brief of a generated case cannot be written in advance: the same planted bug freezes one
model's layer and only slows another's. So the case trains its scenario twice (on its device
and on the CPU, which a healthy device matches bit for bit), `observe` turns the difference into
findings a user would report (a NaN, a parameter that never moves, part of one that never moves,
a worse held-out metric), and `brief`/`title` phrase them. Numbers are rounded coarsely: a brief
reads like a report, and stays the same on another torch release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course.mystery.scenarios import ScenarioReport

ACCURACY_DROP = 0.1  # points of held-out accuracy a user would notice
LOSS_RATIO = 1.5  # times the CPU's held-out or training loss a user would notice
PARTIAL = 0.8  # a parameter "partly frozen" when fewer of its elements move than this share


@dataclass(frozen=True)
class Finding:
    """One thing a user would report: its kind and a sentence."""

    kind: str  # "blow-up", "frozen", "partial", "accuracy", "loss"
    sentence: str
    title: str


def _percent(value: float) -> str:
    return f"{round(100 * value)}%"


def _ratio(value: float) -> str:
    return f"{value:.0f}" if value >= 3 else f"{value:.1f}"


def observe(buggy: ScenarioReport, healthy: ScenarioReport) -> list[Finding]:
    """Everything a user would notice on the device that the CPU run does not show."""
    findings = []
    step = buggy.first_bad_step
    if step is not None and not healthy.blew_up:
        value = buggy.losses[step - 1]
        what = "NaN" if math.isnan(value) else "inf" if math.isinf(value) else "1000x its start"
        short = what if len(what) < 4 else "Exploding"
        sentence = f"the loss is {what} at step {step}"
        findings.append(Finding("blow-up", sentence, f"{short} loss at step {step}"))
    frozen = [n for n in buggy.frozen() if healthy.moved[n] > 0]
    if frozen:
        names = ", ".join(frozen)
        verb = "never changes" if len(frozen) == 1 else "never change"
        title = (
            f"{frozen[0]} never moves"
            if len(frozen) == 1
            else f"{len(frozen)} parameters never move"
        )
        findings.append(Finding("frozen", f"{names} {verb}, not by a single bit", title))
    partial = [
        n
        for n, moved in buggy.moved.items()
        if 0 < moved < PARTIAL * healthy.moved[n] and healthy.moved[n] > 0.5
    ]
    if partial:
        parts = ", ".join(f"{n} ({_percent(buggy.moved[n])})" for n in partial[:3])
        findings.append(
            Finding(
                "partial", f"only part of some parameters ever changes: {parts}", "Half trained"
            )
        )
    findings += _metric(buggy, healthy)
    return findings


def _metric(buggy: ScenarioReport, healthy: ScenarioReport) -> list[Finding]:
    if buggy.blew_up:
        return []
    if buggy.task == "classify" and buggy.metric <= healthy.metric - ACCURACY_DROP:
        sentence = (
            f"held-out accuracy ends at {_percent(buggy.metric)}, where the same script on a "
            f"CPU reaches {_percent(healthy.metric)}"
        )
        return [Finding("accuracy", sentence, f"Stuck at {_percent(buggy.metric)} accuracy")]
    if buggy.task == "regress" and buggy.metric >= LOSS_RATIO * healthy.metric:
        ratio = _ratio(buggy.metric / healthy.metric)
        sentence = f"the held-out loss ends {ratio} times as high as on a CPU"
        return [Finding("loss", sentence, f"A fit {ratio}x worse")]
    if buggy.final_loss >= LOSS_RATIO * healthy.final_loss:
        ratio = _ratio(buggy.final_loss / healthy.final_loss)
        sentence = f"the training loss ends {ratio} times as high as on a CPU"
        return [Finding("loss", sentence, f"Training {ratio}x worse")]
    return []


def brief(description: str, findings: list[Finding]) -> str:
    """The bug report: what the user runs, what they see, and what they already ruled out."""
    seen = "; ".join(f.sentence for f in findings) or "it trains, but not as on a CPU"
    return (
        f"{description} On the emulated Mac, {seen}. No errors, no warnings, and the same "
        "script on a CPU trains as expected."
    )


def title(findings: list[Finding]) -> str:
    """A short title from the most striking finding (never a case id)."""
    return findings[0].title if findings else "Something is off"
