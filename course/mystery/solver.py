"""A scripted investigation: the course's method, step by step, counting its experiments.

How long a case takes is measured, not guessed: `investigate(spec)` solves a case the way
notebook 10 teaches, and counts every experiment it runs.

1. Turn the brief into a number: one training step on the case's device and one on the CPU
   (two experiments).
2. Metadata before values, then the suspects: one recorded training step (one experiment)
   lists every in-place op that ran, in the order it ran, with the shape and strides of what it
   wrote; the parameters' dtype and storage offsets come with it (no experiment: reading).
3. One variable at a time: for each suspect op, in the order the recorder met them, one
   experiment per single property its calls had (a layout, bfloat16, its largest size and
   longest dimension, a last dimension that is not a multiple of 4), then per property no
   recorder shows (a broadcast or aliased operand, a negative or tiny scalar, a repeated
   call, the foreach path). Only when no single property shows the bug on any suspect, a
   hypothesis of two at once: each pair of properties one call had.
4. Confirm: the same condition on another suspect op must not show it (one experiment).

Each experiment is notebook 03's isolation pattern as the reference repros write it
(course.mystery.repros): one op, on CPU-made values with the hypothesised properties and
nothing else unusual, on a fresh copy of the case's device, compared exactly with the CPU.
tests/mystery/test_solver.py holds a floor per band (course.mystery.generate.BANDS) and that it
solves every case it meets; notebook 10's minutes follow from the counts.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from course import emps
from course.layout.named import has_layout, laid_out
from course.mystery.bugs import planted_backend
from course.mystery.conditions import CONDITIONS, LAYOUT_KINDS, VECTOR_WIDTH, Trigger
from course.mystery.generate import CaseSpec
from course.mystery.repros import FAMILIES, reference_repro
from course.mystery.scenarios import compiled

# properties a recorded call cannot show: each is one experiment per suspect op
UNSEEN = (
    "broadcast-input",
    "aliased-input",
    "negative-scalar",
    "tiny-scalar",
    "repeat-call",
    "foreach",
)
# hypotheses tested at the op's own largest output; a long dimension first: its experiment is
# small, while a large 2-D output may need a long dimension too
_SIZES = ("long-dim", "large")
_TIMED = (*_SIZES, "repeat-call")  # properties every call may have: pair with any other


@dataclass(frozen=True)
class Seen:
    """One recorded call's output: what the recorder and the parameters' metadata show."""

    family: str
    shape: tuple[int, ...]
    properties: frozenset[str]


@dataclass
class Investigation:
    """What the scripted investigation did, and what it concluded."""

    experiments: list[str] = field(default_factory=list)
    suspects: list[str] = field(default_factory=list)  # in-place ops the recorded step ran
    op: str = ""
    condition: frozenset[str] = frozenset()

    @property
    def count(self) -> int:
        """How many experiments it ran."""
        return len(self.experiments)

    def solved(self, spec: CaseSpec) -> bool:
        """Whether it named the planted op and condition."""
        return self.op == spec.bug.op and self.condition == spec.bug.trigger.answer


def _properties(t: torch.Tensor) -> frozenset[str]:
    """The single conditions a written tensor itself shows (its layout, dtype, last dimension)."""
    found = {kind for kind in LAYOUT_KINDS if has_layout(t, kind)}
    if t.dtype == torch.bfloat16:
        found.add("bfloat16")
    if t.dim() and t.shape[-1] % VECTOR_WIDTH:
        found.add("unaligned")
    return frozenset(found)


def record_step(spec: CaseSpec) -> list[Seen]:
    """Every in-place suspect call of one training step on the case's device, as the recorder
    and the parameters' metadata show it (a storage offset is metadata, not a recorder column)."""
    scenario = spec.scenario
    with emps.use_backend(planted_backend(spec.bug)):
        model, data = scenario.setup(emps.DEVICE)
        optimizer = model.configure_optimizer()
        x, y = data.x.to(emps.DEVICE), data.y.to(emps.DEVICE)
        with emps.record() as log:
            scenario.loss(model, x, y).backward()
            optimizer.step()
    dtype = next(model.parameters()).dtype
    offset = any(p.storage_offset() for p in model.parameters())
    seen = []
    for event in log.events:
        if event.family not in FAMILIES:
            continue
        written = torch.empty_strided(event.shape, event.stride, dtype=dtype)
        properties = _properties(written) | ({"storage-offset"} if offset else set())
        seen.append(Seen(event.family, tuple(event.shape), frozenset(properties)))
    return seen


def _has_foreach(family: str) -> bool:
    """Whether torch has a foreach form of the op (the optimizers' multi-tensor path)."""
    return hasattr(torch, f"_foreach_{family}_")


def _bounded(kind: str, calls: list[Seen]) -> Trigger | None:
    """A size hypothesis at the op's largest output (or longest dimension): just below it."""
    sizes = [c.shape for c in calls if c.shape]
    if kind == "large":
        bound = max((torch.Size(s).numel() for s in sizes), default=0) - 1
    else:
        bound = max((max(s) for s in sizes), default=0) - 1
    return Trigger(kind, bound) if bound >= 1 else None


def _singles(family: str, calls: list[Seen], parameters: int) -> Iterator[Trigger]:
    """One-property hypotheses for one op: what its calls showed, then what no recorder shows
    (the foreach path where torch has a foreach op of it)."""
    shown = set().union(*(c.properties for c in calls))
    yield from (Trigger(kind) for kind in CONDITIONS if kind in shown)
    for kind in _SIZES:
        trigger = _bounded(kind, calls)
        if trigger is not None:
            yield trigger
    for kind in UNSEEN:
        if kind != "foreach":
            yield Trigger(kind)
        elif _has_foreach(family):
            yield Trigger(kind, max(1, parameters - 2))


def _pairs(calls: list[Seen]) -> Iterator[Trigger]:
    """Two-property hypotheses for one op: each pair of properties one call had, a size or a
    repeated call counting as a property of every call (a size at the largest call that had
    the other property). Never two layouts (no tensor has both) nor two sizes."""
    tried = set()
    for call in calls:
        for pair in itertools.combinations([*_TIMED, *sorted(call.properties)], 2):
            both = frozenset(pair)
            if both in tried or not both & call.properties or len(both & set(LAYOUT_KINDS)) > 1:
                continue
            if both <= set(_TIMED) or both & set(_SIZES) and both & {"permuted", "channels-last"}:
                continue  # two sizes; or a 2-D size experiment for a 3-D or 4-D layout
            tried.add(both)
            first, second = pair  # _TIMED come first: a size is the trigger's bounded kind
            if first in _SIZES:
                alike = [c for c in calls if second in c.properties]
                trigger = _bounded(first, alike)
                if trigger is not None:
                    yield Trigger(first, trigger.bound, second)
            else:
                yield Trigger(first, 0, second)


def experiment(spec: CaseSpec, family: str, trigger: Trigger) -> bool:
    """One isolation experiment on a fresh copy of the case's device: True if it differs."""
    source = reference_repro(family, trigger)
    names = {"laid_out": laid_out, "DEVICE": emps.DEVICE}
    repro = compiled(source, f"experiment on {family}_", names)["repro"]
    with emps.use_backend(planted_backend(spec.bug)):
        return bool(repro())


def investigate(spec: CaseSpec) -> Investigation:
    """Solve a case by the method (see the module docstring), counting experiments."""
    done = Investigation(["a step on the case's device", "the same step on the CPU"])
    calls = record_step(spec)
    done.experiments.append("a recorded step: the suspects")
    suspects = done.suspects = list(dict.fromkeys(c.family for c in calls))
    parameters = len(list(spec.scenario.setup("cpu")[0].parameters()))
    by_op = {f: [c for c in calls if c.family == f] for f in suspects}
    rounds = (
        lambda f: _singles(f, by_op[f], parameters),
        lambda f: _pairs(by_op[f]),
    )
    for hypotheses in rounds:
        for family in suspects:
            for trigger in hypotheses(family):
                done.experiments.append(f"{family}_ on {' and '.join(trigger.kinds)}")
                if experiment(spec, family, trigger):
                    return _confirmed(done, spec, suspects, family, trigger)
    return done


def _confirmed(
    done: Investigation, spec: CaseSpec, suspects: list[str], family: str, trigger: Trigger
) -> Investigation:
    """Keep the property, change the op: another suspect must stay quiet."""
    foreach = "foreach" in trigger.kinds
    other = next((f for f in suspects if f != family and (_has_foreach(f) or not foreach)), None)
    if other is not None:
        done.experiments.append(f"{other}_ on {' and '.join(trigger.kinds)} (control)")
        if experiment(spec, other, trigger):
            return done  # the property breaks other ops too: not this op's bug
    done.op, done.condition = f"{family}_", trigger.answer
    return done
