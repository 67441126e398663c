"""The per-op bug switchboard's cases and what each does to training, as data (no widget).

Why: the story's paradox ("exp_avg_sq is 0, so the update should be enormous, yet nothing
moves") dissolves once you see that *two* ops drop their writes. Flipping them one at a time on
the emulated device gives four outcomes: no bug trains; a broken addcmul_ alone explodes (the
second moment stays 0, so the step is lr * m_hat / (0 + eps), m_hat being m / (1 - beta1) at
step 1); a broken addcdiv_ alone freezes the
encoder; both together freeze it with exp_avg_sq = 0: the second bug masked the first.

`outcomes()` computes all four (tests, the checker of 03.which_explodes and the notebook's
checked table use it); `course.adam.switchboard` is the widget around them. This module imports
no widget stack, so the checker runs where ipywidgets is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from matplotlib.figure import Figure

from course import emps
from course.errors import CourseError, require_int, require_range
from course.figures import PALETTE, REFERENCE_LINE, describe, fitted_figure, integer_ticks
from course.markup import html_table
from course.model.runs import run
from course.progressbar import Progress

# Small on purpose: each case trains in about a second on 2 cores, and the outcome is decided
# by the first step. Passed explicitly so the lead's tuning of plateau's defaults cannot move it.
RUN = {"steps": 12, "lr": 1e-3, "batch_size": 64}
EXPLODE_FACTOR = 100  # Adam moves each weight by about lr per step; 100x that is an explosion


@dataclass(frozen=True)
class Case:
    """One switchboard setting: which kernel families drop writes, and why the outcome follows."""

    label: str
    broken: frozenset[str]
    why: str


CASES: tuple[Case, ...] = (
    Case(
        "no bug",
        frozenset(),
        "every op writes its result, so Adam updates the encoder by about lr per step",
    ),
    Case(
        "addcmul_ only",
        frozenset({"addcmul"}),
        "addcmul_ never writes exp_avg_sq, so it stays 0 and the step is lr * m_hat / (sqrt(0) + "
        "eps): at step 1, m_hat = m / 0.1, so m * lr * 1e9; addcdiv_ works, so that enormous step "
        "lands",
    ),
    Case(
        "addcdiv_ only",
        frozenset({"addcdiv"}),
        "exp_avg_sq is fine, but addcdiv_ computes the update and drops it, so the encoder never "
        "moves",
    ),
    Case(
        "both",
        frozenset({"addcmul", "addcdiv"}),
        "exp_avg_sq stays 0 (the enormous step is computed) but addcdiv_ drops it: frozen, with "
        "exp_avg_sq = 0. The second bug masked the first: the story's case",
    ),
)


@dataclass(frozen=True)
class Outcome:
    """What one case did to the story's SAE (transposed encoder) on the emulated device."""

    case: Case
    verdict: str  # "trains", "explodes" or "frozen"
    loss: tuple[float, ...]
    encoder_change: tuple[float, ...]  # max |W - W0| after each step
    encoder_exp_avg_sq_max: float
    encoder_frozen: bool
    lr: float

    def as_row(self) -> dict[str, object]:
        """A row for the side-by-side table, rounded so it reads the same on every machine."""
        return {  # every column about the encoder weight; short headers fit a printed table
            "case": self.case.label,
            "outcome": self.verdict,
            "change after step 1": _sci(self.encoder_change[0]),
            "frozen (bitwise)": self.encoder_frozen,
            "max exp_avg_sq": _sci(self.encoder_exp_avg_sq_max),
            "loss first -> last": f"{self.loss[0]:.3g} -> {self.loss[-1]:.3g}",
        }


def _sci(value: float) -> str:
    return f"{value:.2g}" if math.isfinite(value) else str(value)


def classify(change: tuple[float, ...], frozen: bool, lr: float) -> str:
    """Name the outcome from measurements: frozen is bitwise, exploding is >> lr per step."""
    if frozen:
        return "frozen"
    if not all(math.isfinite(c) for c in change) or change[0] > EXPLODE_FACTOR * lr:
        return "explodes"
    return "trains"


def find_case(addcmul_broken: bool, addcdiv_broken: bool) -> Case:
    """The case for a pair of toggles."""
    broken = {f for f, on in (("addcmul", addcmul_broken), ("addcdiv", addcdiv_broken)) if on}
    return next(case for case in CASES if case.broken == frozenset(broken))


_RUNS: dict[tuple[str, int, float, int], Outcome] = {}
MAX_CASE_STEPS = 200  # one switchboard case trains for a few seconds at most
MAX_CASE_BATCH = 1024


def get_case(case: Case | str) -> Case:
    """A case, or its label ("no bug", "addcmul_ only", "addcdiv_ only", "both")."""
    if isinstance(case, Case):
        return case
    for known in CASES:
        if known.label == case:
            return known
    labels = ", ".join(repr(c.label) for c in CASES)
    raise CourseError(f"case={case!r} is not a switchboard case; choose one of: {labels}")


def run_case(
    case: Case | str,
    steps: int = RUN["steps"],
    lr: float = RUN["lr"],
    batch_size: int = RUN["batch_size"],
    progress: Progress | None = None,
) -> Outcome:
    """Train the story's SAE once with exactly `case.broken` failing (cached: same inputs, same
    result, so the widget and the checker never retrain what the notebook already ran).

    `progress(done, total, note)` follows the training, when there is any."""
    case = get_case(case)
    require_int("steps", steps, 1, MAX_CASE_STEPS)
    require_range("lr", lr, 1e-8, 1.0)
    require_int("batch_size", batch_size, 1, MAX_CASE_BATCH)
    key = (case.label, steps, lr, batch_size)
    if key not in _RUNS:
        _RUNS[key] = _train(case, steps, lr, batch_size, progress)
    return _RUNS[key]


def is_cached(case: Case | str, steps: int = RUN["steps"]) -> bool:
    """Whether `run_case(case, steps)` (default lr and batch) would answer without training."""
    return (get_case(case).label, steps, RUN["lr"], RUN["batch_size"]) in _RUNS


def _train(
    case: Case, steps: int, lr: float, batch_size: int, progress: Progress | None = None
) -> Outcome:
    name = f"switchboard:{case.label}"
    profile = emps.TORCH_2_2_1.with_broken(case.broken, name=name)
    result = run(
        backend=emps.Backend(profile),
        init="transposed",
        steps=steps,
        lr=lr,
        batch_size=batch_size,
        progress=progress,
    )
    history = result.history
    change = tuple(history.change["encoder.weight"])
    frozen = history.frozen["encoder.weight"]
    return Outcome(
        case,
        classify(change, frozen, lr),
        tuple(history.loss),
        change,
        history.exp_avg_sq_max["encoder.weight"],
        frozen,
        lr,
    )


def outcomes(
    steps: int = RUN["steps"], lr: float = RUN["lr"], batch_size: int = RUN["batch_size"]
) -> list[Outcome]:
    """All four cases, in the order of CASES."""
    return [run_case(case, steps, lr, batch_size) for case in CASES]


def outcome_table(results: list[Outcome]) -> str:
    """The four outcomes as an HTML table, coloured by verdict."""
    colours = {"trains": "#d6f5d6", "explodes": "#ffd6d6", "frozen": "#dde6ff"}
    return html_table([o.as_row() for o in results], colours)


def outcome_figure(results: list[Outcome], highlight: str | None = None) -> Figure:
    """One panel per case, side by side: how far the encoder moved after each step (log scale)."""
    fig = fitted_figure(210 * max(len(results), 2), 240)
    axes = fig.subplots(1, len(results), sharey=True, squeeze=False)[0]  # 1 case: still a row
    for ax, outcome in zip(axes, results, strict=True):
        change = [c if math.isfinite(c) else float("nan") for c in outcome.encoder_change]
        shown = [max(c, 1e-12) for c in change]  # frozen = exactly 0, drawn at the floor
        ax.semilogy(range(1, len(shown) + 1), shown, marker=".", color=PALETTE["blue"])
        ax.axhline(EXPLODE_FACTOR * outcome.lr, **REFERENCE_LINE)
        bold = "bold" if outcome.case.label == highlight else "normal"
        ax.set_title(f"{outcome.case.label}: {outcome.verdict}", fontsize=10, fontweight=bold)
        ax.set_xlabel("step")
        ax.set_xlim(0.5, len(shown) + 0.5)  # also for a single step
        integer_ticks(ax)
    axes[0].set_ylabel("max |encoder - initial|")
    fig.suptitle("dotted: 100 x lr (above: an explosion); frozen: at the floor", fontsize=10)
    return describe(
        fig,
        "One log-scale line plot per switchboard case, side by side: how far the encoder's "
        "weights moved from their start after each step, each panel titled with its verdict",
    )
