"""What notebook 02's checkers share: the hidden benches, and verdicts about how a step ran.

Every bench logs the steps taken on it (`Bench.steps`), so a checker sees *how* an experiment
ran, not only what it concluded: an optimizer stepped outside the bench, another optimizer than
the one handed in. Those causes are named before any conclusion is compared, because they are
what makes a conclusion wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from course import emps
from course.exercises import Verdict, failed
from course.isolation import experiments
from course.isolation.experiments import Bench, Update, bench

LATER = emps.FIXED_MACOS14  # a profile without the story's bug, for hidden benches
SMALL = {"d_model": 64, "n_features": 256, "k": 8}  # other sizes, and quicker to run
STORY_BETAS = (0.9, 0.999)  # torch.optim.Adam's default, the story's


@dataclass(frozen=True)
class Variant:
    """One hidden bench and one update, with why a right experiment must get it right.

    `update` makes what the learner's function is handed, from the learning rate;
    `optimizer` is the class name of the optimizer it makes (None: a step function)."""

    what: str
    why: str
    settings: dict = field(default_factory=dict)
    update: Callable[[float], Update] = experiments.adam
    optimizer: str | None = "Adam"
    lr: float = 1e-3
    betas: tuple[float, float] = STORY_BETAS
    steps: int = 1

    def bench(self) -> Bench:
        """A fresh bench for this variant (each experiment gets its own)."""
        return bench(**self.settings)

    def make_update(self) -> Update:
        """The update this variant hands to the learner's function."""
        return self.update(self.lr)


def require_bool(got: object, variant: Variant) -> Verdict | None:
    if isinstance(got, bool):
        return None
    return failed(
        f"on {variant.what} your function returned {got!r}; return True or False "
        "(a tensor? use torch.equal, which gives a bool)",
        type(got).__name__,
        "bool",
    )


def stepped_outside(bench: Bench, what: str) -> Verdict | None:
    """A step taken while the bench was not active ran on another profile: say so first."""
    outside = [record for record in bench.steps if not record.active]
    if not outside:
        return None
    return failed(
        f"on {what} your experiment stepped {outside[0].update} outside the bench. The bench "
        "must be active when an optimizer steps: bench.step(update) makes it so, or step "
        "inside `with bench:`. Outside it a step runs on whatever profile happens to be in "
        f"force, not necessarily the bench's ({bench_label(bench)}): on another bench that is "
        "another device, and the experiment describes the wrong one."
    )


def bench_label(bench: Bench) -> str:
    return "the CPU" if bench.device == "cpu" else emps.get_profile(bench.profile).label


def stepped_other(bench: Bench, variant: Variant) -> Verdict | None:
    """An experiment that stepped another optimizer than the `update` it was given."""
    used = sorted({r.update for r in bench.steps if r.optimizer is not None})
    if not used or used == [variant.optimizer]:
        return None
    given = variant.optimizer or "a step function (your manual SGD)"
    return failed(
        f"on {variant.what} your function stepped {', '.join(used)}, but the update it was "
        f"given was {given}: take the step with `update` (bench.step(update)), or the "
        "experiment tests your favourite optimizer, not the one asked about"
    )


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * abs(b) + 1e-30


def statistic_verdict(
    label: str, where: str, mine: float, want: float, mistakes: list[tuple[float, str]]
) -> Verdict | None:
    """None when right; else what the learner's number is, when it matches a known mistake."""
    if close(mine, want):
        return None
    for value, cause in mistakes:
        if not close(value, want) and close(mine, value):
            return failed(f"{label} is wrong {where}: {cause}", f"{mine:.6g}", f"{want:.6g}")
    return failed(f"{label} is wrong {where}", f"{mine:.6g}", f"{want:.6g}")
