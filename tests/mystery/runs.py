"""Helpers for the mystery tests: seeds that cover every condition, cases that never train."""

from __future__ import annotations

import functools

from course.mystery.case import Case, Measured
from course.mystery.conditions import CONDITIONS, DECOY_ONLY
from course.mystery.generate import CaseSpec, generate

PLANTED_KINDS = tuple(kind for kind in CONDITIONS if kind not in DECOY_ONLY)


@functools.cache
def seed_for(kind: str) -> int:
    """The first seed whose first draw plants a condition of this kind."""
    return next(seed for seed in range(10_000) if generate(seed).bug.trigger.kind == kind)


def spec_for(kind: str) -> CaseSpec:
    """That seed's case."""
    return generate(seed_for(kind))


def untrained_case(spec: CaseSpec) -> Case:
    """A Case for checkers that never train (check_repro, check_culprit): no measured runs."""
    return Case(Measured(spec, None, None, ()))
