"""What notebook 02's checkers share: the hidden benches, and verdicts about how a step ran.

Every bench logs the steps taken on it (`Bench.steps`), so a checker sees *how* an experiment
ran, not only what it concluded: an optimizer stepped outside the bench, another optimizer than
the one handed in. Those causes are named before any conclusion is compared, because they are
what makes a conclusion wrong.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from course import emps
from course.exercises import Verdict, failed
from course.isolation import experiments
from course.isolation.experiments import Bench, Settings, Update, bench, update_settings

LATER = emps.FIXED_MACOS14  # a profile without the story's bug, for hidden benches
# A device that never shipped: the story's profile with one more of Adam's writes kept, so
# Adam's state (exp_avg_sq stays 0) says "frozen" while the weights move. A hidden bench where
# a proxy and the weights disagree; its label names no kernel (notebook 03 finds them).
MADE_UP = dataclasses.replace(
    emps.TORCH_2_2_1.with_broken({"addcmul"}),
    name="made-up",
    label="a made-up device profile",
    description="a device that never shipped, for a hidden bench",
)
SMALL = {"d_model": 64, "n_features": 256, "k": 8}  # other sizes, and quicker to run
STORY_BETAS = (0.9, 0.999)  # torch.optim.Adam's default, the story's
STORY_ADAM = update_settings(experiments.adam())  # every hyperparameter of the story's Adam


@dataclass(frozen=True)
class Variant:
    """One hidden bench and one update, with why a right experiment must get it right.

    `update` makes what the learner's function is handed, from the learning rate; `optimizer`
    is the class name of the optimizer it makes (None: a step function). `data_scale`
    multiplies the bench's samples: tiny inputs give gradients far below Adam's eps, whose
    steps then move an element by a float32 step or a few, not by lr. `zero_columns` zeroes
    each sample's first inputs: the encoder's first columns then get no gradient in a first
    step. `samples`, when given, replace the bench's dataset."""

    what: str
    why: str
    settings: dict = field(default_factory=dict)
    update: Callable[[float], Update] = experiments.adam
    optimizer: str | None = "Adam"
    lr: float = 1e-3
    betas: tuple[float, float] = STORY_BETAS
    steps: int = 1
    data_scale: float = 1.0
    zero_columns: int = 0
    samples: tuple[tuple[float, ...], ...] | None = None

    def bench(self) -> Bench:
        """A fresh bench for this variant (each experiment gets its own)."""
        made = bench(**self.settings)
        if self.samples is not None or self.data_scale != 1.0 or self.zero_columns:
            # bench() has no such arguments; a new tensor, so the cached dataset stays
            data = made._data if self.samples is None else torch.tensor(self.samples)
            data = data * self.data_scale
            data[:, : self.zero_columns] = 0.0
            made._data = data
        return made

    def make_update(self) -> Update:
        """The update this variant hands to the learner's function."""
        return self.update(self.lr)


def watched(variant: Variant) -> tuple[Bench, list[int]]:
    """A fresh bench for the variant, and the step count at each bench.backward() it sees.

    A step needs a backward before it (the gradients it applies); the log of steps alone cannot
    say whether one came first, so the checker watches this bench's backward too."""
    made, calls = variant.bench(), []
    backward = made.backward

    def watch() -> float:
        calls.append(len(made.steps))
        return backward()

    made.backward = watch  # this bench only: the checker's own, handed to the learner
    return made, calls


def unprepared_step(b: Bench, calls: list[int]) -> int | None:
    """The first step (0-based) with no bench.backward() since the step before it, else None."""
    return next((i for i in range(len(b.steps)) if i not in calls), None)


def require_bool(got: object, variant: Variant) -> Verdict | None:
    if isinstance(got, bool):
        return None
    message = f"on {variant.what} your function returned {got!r}; return True or False (a "
    return failed(
        message + "tensor? use torch.equal, which gives a bool)", type(got).__name__, "bool"
    )


def stepped_outside(b: Bench, what: str) -> Verdict | None:
    """A step taken while the bench was not active ran on another profile: say so first."""
    outside = [record.update for record in b.steps if not record.active]
    if not outside:
        return None
    return failed(
        f"on {what} your experiment stepped {outside[0]} outside the bench. The bench must be "
        "active when an optimizer steps: bench.step(update) makes it so, or step inside `with "
        "bench:`. Outside it a step runs on whatever profile happens to be in force, not "
        f"necessarily the bench's ({bench_label(b)}): on another bench that is another device, "
        "and the experiment describes the wrong one."
    )


def bench_label(b: Bench) -> str:
    return "the CPU" if b.device == "cpu" else emps.get_profile(b.profile).label


def stepped_other(b: Bench, variant: Variant) -> Verdict | None:
    """An experiment that stepped another optimizer than the `update` it was given, or the
    same optimizer with other settings."""
    used = sorted({r.update for r in b.steps if r.optimizer is not None})
    if not used:
        return None
    if used == [variant.optimizer]:
        want = update_settings(variant.make_update())
        return wrong_setting(b, want, variant.what, "the `update` it was given")
    return failed(
        f"on {variant.what} your function stepped {', '.join(used)}, but the update it was given "
        f"was {variant.optimizer or 'a step function (your manual SGD)'}: take the step with "
        "`update` (bench.step(update)), or the experiment tests your favourite optimizer, not "
        "the one asked about"
    )


def wrong_setting(b: Bench, want: Settings | None, what: str, asked: str) -> Verdict | None:
    """The first hyperparameter of a logged step that differs from `want` (the optimizer asked
    for, `asked` in words), with its name: eps, weight_decay, amsgrad, maximize, momentum...

    Why every one and not only lr and betas: each changes the numbers (or, foreach and fused,
    the code path that computes them), so a run with another is another experiment."""
    wanted = dict(want or ())
    for record in b.steps if want is not None else ():
        for got in map(dict, record.settings):
            differ = sorted(n for n in got.keys() | wanted.keys() if got.get(n) != wanted.get(n))
            if differ:
                mine, theirs = (f"{differ[0]} = {s.get(differ[0])!r}" for s in (got, wanted))
                return failed(
                    f"on {what} your {record.update} ran with {mine}, and {asked} has {theirs}: "
                    "every setting of the optimizer (eps, weight_decay, amsgrad, maximize, "
                    "foreach, ... not only lr and betas) changes the numbers or the code that "
                    "computes them, so another one is a second variable. Keep every setting you "
                    "were not asked to change",
                    mine,
                    theirs,
                )
    return None


def is_pair(got: object) -> bool:
    """Whether an answer is two values. Why a list too: the prompts ask for "the pair", and
    `[a, b]` says the same as `(a, b)`; refusing it would teach a spelling, not the lesson."""
    return isinstance(got, (tuple, list)) and len(got) == 2


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * abs(b) + 1e-30


def not_a_pair(what: str, got: object, pair: str) -> Verdict:
    message = f"return a pair ({pair}); {what} you returned {got!r}"
    return failed(message, type(got).__name__, "a pair of two floats")


def statistic_verdict(
    label: str, where: str, mine: float, want: float, mistakes: list, shown: bool = True
) -> Verdict | None:
    """None when right; else what the learner's number is, named by the known mistake
    (`mistakes`: the number a mistake gives, and its cause) that gives it.

    `shown=False` where the expected number is the finding the experiment is for (exp_avg_sq
    exactly 0): the learner sees their number and its cause, not the result."""
    if close(mine, want):
        return None
    expected = f"{want:.6g}" if shown else "(not shown: your experiment measures it)"
    cause = next((f": {c}" for v, c in mistakes if not close(v, want) and close(mine, v)), "")
    return failed(f"{label} is wrong {where}{cause}", f"{mine:.6g}", expected)


def same_answer(seen: dict, mine: tuple, where: str, want: tuple, source: str) -> Verdict | None:
    """The learner's numbers, seen before where the right ones differ: nothing was computed.

    `seen` maps each pair the learner gave to where, and the right pair there; it is filled
    here. `source` says where the numbers must come from instead."""
    earlier = seen.setdefault(mine, (where, want))
    if earlier[0] == where or all(close(a, b) for a, b in zip(earlier[1], want, strict=True)):
        return None
    return failed(
        f"your function gave the same numbers {earlier[0]} and {where}, where the right numbers "
        f"differ: compute them from {source} (numbers copied from a printed output fit one case "
        "only)"
    )
