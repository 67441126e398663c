"""`--dist loadfile` for two workers that finish together (a pytest plugin: the root conftest).

Why: xdist hands out whole files, the ones with most tests first, so heavy files with few tests
(a fresh venv install, a compile, a training) go out last, and a worker takes its next file while
it still has two tests to run: one can finish a long test while the other idles. And
tests/test_learner_copies.py, which runs all eleven learner copies top to bottom (about as much
time as nbval's notebooks), was one unit for one worker.

What changes, and what does not:
- the learner-copy Run All tests form one unit per copy (its three tests share one execution,
  `run_all`'s cache, so they stay together); every other unit is still a whole file, so nbval's
  cells of a notebook share one kernel and a module's fixtures are set up once;
- units go out heaviest first, weighed by the time each took in the last run here
  (build/test_durations.json, written at the end of every run); without that record, notebooks
  and learner copies first (each executes a whole notebook), then files by their number of tests.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DURATIONS = ROOT / "build" / "test_durations.json"
RUN_ALL = "tests/test_learner_copies.py::test_run_all_"
NOTEBOOK_WEIGHT = 1000.0  # seconds: above any file, when no run was recorded yet


def scope(nodeid: str) -> str:
    """The unit a test is scheduled in: its file, or its learner copy for a Run All test."""
    if nodeid.startswith(RUN_ALL) and "[" in nodeid:
        return "learner copy " + nodeid[nodeid.index("[") :]
    return nodeid.split("::", 1)[0]


def recorded(path: Path | None = None) -> dict[str, float]:
    """Seconds per unit in the last run that ran it; empty if none was recorded or unreadable."""
    try:
        data = json.loads((path or DURATIONS).read_text())
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(v, int | float)}


def weight(unit: str, tests: int, seconds: dict[str, float]) -> float:
    """How long a unit is expected to take: recorded, else a guess from what it is."""
    if unit in seconds:
        return seconds[unit]
    if unit.endswith(".ipynb") or unit.startswith("learner copy "):
        return NOTEBOOK_WEIGHT
    return tests / 100  # xdist's own order: most tests first


class _Scheduling:
    """Registered only where xdist is (its hook is unknown to pytest without it)."""

    def __init__(self) -> None:
        self.seconds = recorded()

    def pytest_xdist_make_scheduler(self, config, log):
        """The balanced scheduler for --dist loadfile; other modes keep xdist's own."""
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadFileScheduling

        if not hasattr(LoadFileScheduling, "_assign_work_unit"):
            return None  # another xdist inside: its own loadfile, unbalanced but correct
        seconds = self.seconds

        class Balanced(LoadFileScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return scope(nodeid)

            def _assign_work_unit(self, node) -> None:
                queue = self.workqueue
                heaviest = max(queue, key=lambda unit: weight(unit, len(queue[unit]), seconds))
                queue.move_to_end(heaviest, last=False)
                super()._assign_work_unit(node)

        return Balanced(config, log)


class _Recorder:
    """Sums each unit's setup, call and teardown times (in the controller: workers report here)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report) -> None:
        self.seconds[scope(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session) -> None:
        if not self.seconds:
            return
        merged = {**recorded(), **{k: round(v, 2) for k, v in self.seconds.items()}}
        DURATIONS.parent.mkdir(exist_ok=True)
        partial = DURATIONS.with_name(f"{DURATIONS.name}.{os.getpid()}")  # runs may overlap
        partial.write_text(json.dumps(dict(sorted(merged.items())), indent=1) + "\n")
        partial.replace(DURATIONS)


def pytest_configure(config) -> None:
    if hasattr(config, "workerinput"):
        return  # a worker: its reports go to the controller, which records them
    config.pluginmanager.register(_Recorder(), "test-durations")
    if config.pluginmanager.has_plugin("xdist"):
        config.pluginmanager.register(_Scheduling(), "balanced-loadfile")
