"""Adam's four in-place ops, each tested alone on the emulated device: the story's table.

Why alone: "Adam does not update the encoder" has many suspects; one op at a time, with the
output's layout as the only variable, names the culprits. Each test starts the output at
*non-zero* values, because a result of zero cannot tell "writes zeros" from "writes nothing"
(Adam's exp_avg_sq starts at zero, which is why the story's first clue was ambiguous). The
timing shows that the broken calls still do the work: their result just never arrives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from course import emps
from course.errors import require_choice, require_int, require_seed, require_shape
from course.exercises.watch import learner_result
from course.layout.named import laid_out

# Each op as Adam's single-tensor step calls it (see course.adam.scratch.adam_step).
OP_CALLS: dict[str, Callable[[torch.Tensor, torch.Tensor, torch.Tensor], object]] = {
    "lerp_": lambda out, grad, denom: out.lerp_(grad, 0.1),
    "mul_": lambda out, grad, denom: out.mul_(0.999),
    "addcmul_": lambda out, grad, denom: out.addcmul_(grad, grad, value=0.001),
    "addcdiv_": lambda out, grad, denom: out.addcdiv_(grad, denom, value=-0.001),
}
OPS = tuple(OP_CALLS)
LAYOUTS = ("contiguous", "transposed")
MAX_REPEATS = 200
STARTS = ("non-zero", "zeros")


def on_profile(profile: str | emps.Profile, experiment: Callable[..., object], *args) -> object:
    """Run any experiment (a function of `args`) on another emulated profile: the versions check."""
    with emps.use_profile(profile):
        return experiment(*args)


@dataclass(frozen=True)
class Isolation:
    """One op run once on the emulated device, compared with the same op on the CPU."""

    op: str
    output_layout: str
    input_layout: str
    start: str
    verdict: str  # "updates", "unchanged", "stays 0: ambiguous", "writes zeros", "wrong"
    temporaries: int  # contiguous copies the emulated kernel made
    lost_write: bool  # the kernel computed a result that never reached the output


def classify(result: torch.Tensor, before: torch.Tensor, expected: torch.Tensor) -> str:
    """Name what the op did, from values only (the order of the tests matters)."""
    if torch.equal(result, expected):
        return "updates"
    if torch.equal(result, before):
        return "stays 0: ambiguous" if not before.any() else "unchanged"  # zeros, or nothing?
    if not result.any():
        return "writes zeros"
    return "wrong"


def isolate(
    op: str,
    output_layout: str = "transposed",
    input_layout: str = "contiguous",
    start: str = "non-zero",
    profile: str | emps.Profile = emps.DEFAULT_PROFILE,
    shape: tuple[int, int] = (6, 4),
    seed: int = 0,
) -> Isolation:
    """Run one op on the emulated device and say what reached its output."""
    require_choice("op", op, OPS)
    require_choice("start", start, STARTS)
    require_shape("shape", shape, dims=2)
    require_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    initial = torch.randn(shape, generator=gen) if start == "non-zero" else torch.zeros(shape)
    grad, denom = torch.randn(shape, generator=gen), torch.rand(shape, generator=gen) + 0.5
    expected = initial.clone()
    OP_CALLS[op](expected, grad, denom)  # the CPU's answer
    out = laid_out(initial, output_layout, emps.DEVICE)
    inputs = [laid_out(t, input_layout, emps.DEVICE) for t in (grad, denom)]
    with emps.use_profile(profile), emps.record() as log:
        OP_CALLS[op](out, *inputs)
    event = log.events[-1]
    verdict = classify(out.cpu(), initial, expected)
    return Isolation(
        op, output_layout, input_layout, start, verdict, event.temporaries, event.lost_write
    )


CONDITIONS = {  # the story's experiment: one thing non-contiguous at a time
    "contiguous output": ("contiguous", "contiguous", "non-zero"),
    "non-contiguous inputs": ("contiguous", "transposed", "non-zero"),
    "non-contiguous output, from 0": ("transposed", "contiguous", "zeros"),
    "non-contiguous output, from non-zero": ("transposed", "contiguous", "non-zero"),
}


def isolation_table(profile: str | emps.Profile = emps.DEFAULT_PROFILE) -> list[dict[str, object]]:
    """The story's table: one row per condition, one column per op (narrow enough to print)."""
    rows = []
    for condition, (output_layout, input_layout, start) in CONDITIONS.items():
        row: dict[str, object] = {"condition": condition}
        for op in OPS:
            row[op] = isolate(op, output_layout, input_layout, start, profile).verdict
        rows.append(row)
    lost = {op: isolate(op, "transposed", profile=profile).lost_write for op in OPS}
    rows.append(
        {
            "condition": "result lost in a temporary",
            **{op: "yes" if lost[op] else "no" for op in OPS},
        }
    )
    return rows


@dataclass(frozen=True)
class Timing:
    """Fastest kernel time of one op (the least disturbed by other load), by output layout."""

    op: str
    contiguous_ms: float
    transposed_ms: float
    transposed_lost: bool

    @property
    def ratio(self) -> float:
        """How much longer the non-contiguous call took."""
        return self.transposed_ms / self.contiguous_ms


def time_op(
    op: str,
    shape: tuple[int, int] = (1536, 384),
    repeats: int = 15,
    profile: str | emps.Profile = emps.DEFAULT_PROFILE,
) -> Timing:
    """Time one op on the story's encoder shape, with the emulated kernel's own clock."""
    require_choice("op", op, OPS)
    require_shape("shape", shape, dims=2)
    require_int("repeats", repeats, 1, MAX_REPEATS)
    gen = torch.Generator().manual_seed(0)
    grad = torch.randn(shape, generator=gen).to(emps.DEVICE)
    denom = (torch.rand(shape, generator=gen) + 0.5).to(emps.DEVICE)
    fastest, lost = {}, False
    for layout in LAYOUTS:
        out = laid_out(torch.randn(shape, generator=gen), layout, emps.DEVICE)
        with emps.use_profile(profile), emps.record() as log:
            for _ in range(repeats):
                OP_CALLS[op](out, grad, denom)
        fastest[layout] = min(e.seconds for e in log.events) * 1e3
        lost = any(e.lost_write for e in log.events)
    return Timing(op, fastest["contiguous"], fastest["transposed"], lost)


def timing_rows(repeats: int = 15) -> list[dict[str, object]]:
    """Contiguous vs non-contiguous kernel times for all four ops (machine-dependent numbers:
    the emulator's kernels on this CPU, copies included; not a GPU's times)."""
    rows = []
    for op in OPS:
        t = time_op(op, repeats=repeats)
        rows.append(
            {
                "op": op,
                "contiguous (ms)": round(t.contiguous_ms, 3),
                "non-contiguous (ms)": round(t.transposed_ms, 3),
                "ratio": round(t.ratio, 2),
                "result lost": t.transposed_lost,
            }
        )
    return rows


SAME_WITHIN = 0.1  # a ratio within 10% of 1 is "about as fast": a shared CPU's noise is that large


def timing_summary(rows: list[dict[str, object]]) -> str:
    """What `timing_rows` measured, in one sentence under its table.

    The notebook cannot state a timing result in markdown: the emulator's times depend on the
    CPU and its load, and on some machines a non-contiguous call is no slower at all. So the
    sentence is computed from the table just printed, and says only what that table shows."""
    groups: dict[str, list[str]] = {"slower": [], "about as fast": [], "faster": []}
    for row in rows:
        ratio = float(row["ratio"])
        key = (
            "slower"
            if ratio > 1 + SAME_WITHIN
            else "faster"
            if ratio < 1 - SAME_WITHIN
            else "about as fast"
        )
        groups[key].append(f"{row['op']} ({ratio:.2f}x)")
    said = "; ".join(f"{how}: {', '.join(ops)}" for how, ops in groups.items() if ops)
    lost = [str(row["op"]) for row in rows if row["result lost"]]
    ending = (
        f" Either way, {' and '.join(lost)} computed their result and lost it in the temporary."
        if lost
        else " No call lost its result."
    )
    return f"Measured on this machine, non-contiguous time over contiguous time: {said}.{ending}"


# ---- the learner's own functions, run where the notebook's text reads their results ----------


def by_layout(isolate_op: Callable[[str, str, str], object]) -> list[dict[str, object]]:
    """Your `isolate_op` for each op, with a transposed output and with transposed inputs.

    Why the notebook computes these rows instead of asking for them: the text after them reads
    them, so they must come from the function the checker has just judged, never be left blank."""
    return [
        {
            "op": op,
            "transposed output": learner_result(
                lambda op=op: isolate_op(op, "transposed", "contiguous")
            ),
            "transposed inputs": learner_result(
                lambda op=op: isolate_op(op, "contiguous", "transposed")
            ),
        }
        for op in OPS
    ]


def by_version(lost_ops: Callable[[emps.Profile], object]) -> list[dict[str, object]]:
    """Your `lost_ops` on each profile of the story's versions, as the table the text reads."""

    def lost(profile: emps.Profile) -> object:
        found = lost_ops(profile)
        if not isinstance(found, set | frozenset):
            return found  # shown as it is: the checker says what a set of op names should be
        return ", ".join(sorted(found)) or "none"

    return [
        {"profile": p.label, "lost into a transposed output": learner_result(lambda p=p: lost(p))}
        for p in emps.PROFILES.values()
    ]
