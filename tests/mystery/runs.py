"""Shared runs for the mystery tests: each scenario run once per bug, cached for the session."""

from __future__ import annotations

import functools

from course import emps
from course.mystery.bugs import PlantedBug, planted_backend
from course.mystery.case import _bug_free_run
from course.mystery.scenarios import SCENARIOS, SEED, ScenarioReport, run


@functools.cache
def planted_run(scenario: str, bug: PlantedBug) -> ScenarioReport:
    """A scenario on the device with one planted bug."""
    with emps.use_backend(planted_backend(bug)):
        return run(SCENARIOS[scenario], SEED)


def clean_run(scenario: str) -> ScenarioReport:
    """A scenario on the bug-free device (the same cache the fix checker uses)."""
    return _bug_free_run(scenario)
