"""A case from a seed: everything a learner meets, and everything an instructor needs.

`generate(seed)` draws, from one `random.Random(seed)`: the condition kind (weighted, see
`KIND_WEIGHTS`), a site of some model family where a habit creates it, the planted op, the
effect, and the design's sizes, recipe, data and steps (course.mystery.families). It adds what
the checkers need: a *decoy* device (every other suspect op broken under the same condition,
so a repro that does not isolate the op fails) and *sibling* devices (the same op broken
under other conditions, so a repro that does not isolate the condition fails), the
reference repro and the reference fix (as source).

Note [Most cases need a hypothesis]
    The auditor's default sweep covers the named layouts and every dtype, and a 71,680-element
    output with 448 columns, so it meets a layout, bfloat16, a size or a long dimension at once
    (and sometimes a stale cache). Those kinds (`VISIBLE_KINDS`) are always planted paired with
    a companion no default shape has (`conditions.COMPANIONS`: a last dimension that is not a
    multiple of 4), see Note [Two properties at once]; the others (operands, scalars, the
    foreach path, the unaligned path alone) need a knob (shape=, scalars=, inputs=) or an
    experiment of one's own. Either way the learner forms a hypothesis from the symptom and
    tests it. `band` tags each case by what it takes; tests/mystery/test_generate.py audits a
    deal, and tests/mystery/test_solver.py measures the bands with a scripted investigation.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass

from torch import nn

from course import emps
from course.layout.named import laid_out
from course.mystery.bugs import PlantedBug
from course.mystery.conditions import COMPANIONS, LAYOUT_KINDS, Trigger
from course.mystery.effects import ALLOWED
from course.mystery.families import WEAK, Design, Site, design, sites_for
from course.mystery.fixes import reference_fix
from course.mystery.repros import reference_repro
from course.mystery.scenarios import Scenario, compiled

# What the auditor's default sweep meets alone: its layouts and dtypes, its large output (past
# every size bound and long dimension here), and a stale cache (its layouts call an op many
# times with one shape, some with other inputs). Planted only paired with COMPANION.
VISIBLE_KINDS = (*LAYOUT_KINDS, "bfloat16", "large", "long-dim", "repeat-call")
COMPANION = COMPANIONS[0]
# What a case takes, by its condition (see `band`): one audit with the right knob, an
# experiment of one's own (no knob reaches the foreach path), or two properties varied apart.
BANDS = {
    "knob": ("unaligned", "broadcast-input", "aliased-input", "negative-scalar", "tiny-scalar"),
    "experiment": ("foreach",),
    "pair": VISIBLE_KINDS,
}
KIND_WEIGHTS = {
    "transposed": 4,
    "storage-offset": 2,
    "step-sliced": 1,
    "channels-last": 2,
    "permuted": 2,
    "bfloat16": 2,
    "large": 10,
    "long-dim": 8,
    "unaligned": 8,
    "broadcast-input": 12,
    "aliased-input": 6,
    "repeat-call": 4,
    "negative-scalar": 12,
    "tiny-scalar": 5,
    "foreach": 12,
}
# Every in-place op a scenario runs whose kernel a decoy may break: compute ops only, so that
# a repro's set-up (torch.zeros, randn on the device: fill_, normal_) still works there.
SUSPECTS = (
    "add",
    "addcdiv",
    "addcmul",
    "clamp",
    "div",
    "lerp",
    "masked_fill",
    "mul",
    "relu",
    "sub",
)
SIBLING = {
    "transposed": "step-sliced",
    "channels-last": "permuted",
    "permuted": "channels-last",
}  # the neighbouring layout; any other kind's is "transposed"
# Sizes a sibling device breaks above: past every reference repro's output (a "large" one has
# at most 1,040 rows of 64), so only a repro that also tries a huge output meets them.
SIBLING_BOUNDS = {"large": 1 << 14, "long-dim": 4096}


@dataclass(frozen=True)
class CaseSpec:
    """One generated case: the user's scenario, the planted bug, and how answers are judged."""

    seed: int
    scenario: Scenario
    site: Site
    bug: PlantedBug
    repro: str  # the reference repro's source
    fix: str  # the reference fix's source
    attempt: int = 0  # which of the seed's draws (the first whose run shows a symptom opens)

    @property
    def design(self) -> Design:
        """The user's code and description."""
        return self.scenario.design

    @property
    def decoy(self) -> PlantedBug:
        """Every other suspect op broken under the same condition, with the same effect."""
        others = tuple(f for f in SUSPECTS if f not in self.bug.families)
        return PlantedBug(others, self.bug.trigger, self.bug.effect)

    @property
    def siblings(self) -> tuple[PlantedBug, ...]:
        """The same op broken under each of some other conditions instead.

        Why these: the neighbouring layout and every other one (a repro that gives the output
        a layout besides a property of its own is not minimal); every other condition the
        user's habit could create at this site (the confounds a repro that copies the model's
        call meets, e.g. a causal mask both broadcast and negative); and a dtype and two
        sizes, so a repro that sweeps conditions for the op fails wherever the sweep reaches."""
        trigger = self.bug.trigger
        kind = trigger.kind
        kinds = [
            SIBLING.get(kind, "transposed"),
            *self.site.kinds,
            *LAYOUT_KINDS,
            "bfloat16",
            *SIBLING_BOUNDS,
        ]
        unique = [k for i, k in enumerate(kinds) if k not in trigger.kinds and k not in kinds[:i]]
        return tuple(
            PlantedBug(self.bug.families, Trigger(k, SIBLING_BOUNDS.get(k, 0)), ALLOWED[k][0])
            for k in unique
        )

    def repro_function(self) -> Callable[[], bool]:
        """The reference repro, compiled from its source (instructors and tests run it)."""
        names = {"laid_out": laid_out, "DEVICE": emps.DEVICE}
        return compiled(self.repro, f"reference repro of seed {self.seed}", names)["repro"]

    def fix_function(self) -> Callable[[nn.Module], nn.Module]:
        """The reference fix, compiled from its source."""
        return compiled(self.fix, f"reference fix of seed {self.seed}", {})["patch"]

    def key(self) -> tuple:
        """What makes two cases different cases (sizes and numbers aside): family, habit,
        what is struck, op, condition and effect."""
        bug = self.bug
        design = self.design
        return (design.family, design.habit, design.hit, bug.op, bug.trigger.kind, bug.effect)

    @property
    def band(self) -> str:
        """What the case takes (a key of BANDS): one knob, an experiment, or a pair."""
        return band(self.bug.trigger.kind)


def band(kind: str) -> str:
    """The band of a case whose condition is of this kind."""
    return next(name for name, kinds in BANDS.items() if kind in kinds)


def _weighted(rng: random.Random, weights: dict[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


@functools.lru_cache(maxsize=512)
def generate(seed: int, attempt: int = 0) -> CaseSpec:
    """A seed's case: its `attempt`-th draw (neighbouring seeds give unrelated cases).

    `course.mystery.case.measured` takes the first draw whose run shows a symptom; almost
    always the first (tests/mystery/test_generate.py measures a sample).
    """
    rng = random.Random(f"mystery case {seed}/{attempt}")
    kind = _weighted(rng, KIND_WEIGHTS)
    site = rng.choice(sites_for(kind))
    effects = {
        op: [e for e in site.effects or ALLOWED[kind] if (op, e) not in WEAK] for op in site.ops
    }
    op = rng.choice([op for op in site.ops if effects[op]])
    effect = rng.choice(effects[op])
    also = COMPANION if kind in VISIBLE_KINDS else ""
    drawn = design(rng, site, kind, op, also, random.Random(f"mystery habits {seed}/{attempt}"))
    trigger = Trigger(kind, drawn.bound, also)
    scenario = Scenario(drawn, rng.randrange(1 << 31))
    bug = PlantedBug((op,), trigger, effect)
    repro, fix = reference_repro(op, trigger), reference_fix(drawn)
    return CaseSpec(seed, scenario, site, bug, repro, fix, attempt)
