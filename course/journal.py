"""A learner's progress, kept on disk: every check, hint and solution, with the time it happened.

Why a file: a learner restarts kernels, closes the laptop and comes back days later; a workshop
instructor wants to see who is stuck without looking over shoulders. So `course.exercises`
appends one JSON line per event to `progress.jsonl` in a user data directory (or in
`$COURSE_PROGRESS_DIR`), and this module turns those lines into tables: one learner's
(`python -m course progress`, the widget of notebook 00) or a whole room's
(`python -m course progress --collect DIR`, one file per learner).

A prediction is saved here too (a "predict" event with the choice): it is committed once, before
the experiment, and a restarted kernel must not let the learner commit again after seeing the
result. Predictions are not exercises: the progress tables count checks, hints and solutions only,
and a name a learner committed a prediction under is a prediction (journals written before
07.predict_scramble became one hold checks under it too; they are not counted).
A mystery case's checks carry the case's seed (`case`), so a limit on tries per case survives a
restarted kernel too.

An append-only log of small lines survives several notebooks writing at once, and a damaged
line costs only itself: reading skips what it cannot parse.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from course.errors import CourseError
from course.tables import text_table

ENV_DIR = "COURSE_PROGRESS_DIR"
APP_DIR = "pytorch-internals-course"
FILENAME = "progress.jsonl"
EXERCISE_EVENTS = ("check", "hint", "solution")
EVENTS = (*EXERCISE_EVENTS, "predict")
STUCK_ATTEMPTS = 3  # failed checks (without a pass) after which an instructor should look
STUCK_QUIET_MINUTES = 3  # ... once no new try came for this long: a learner iterating is not stuck
# A mystery case's checks (course.mystery): not registered exercises, but listed in the progress
# tables like them, so "not started" shows before the first one.
CASE_CHECKS = ("10.repro", "10.culprit", "10.fix")
_WARNED = {"write": False}


@dataclass(frozen=True)
class Event:
    """One line of the journal: what happened to which exercise, and when (Unix seconds).

    `passed` belongs to a check, `choice` to a prediction (the exercise field then names it),
    `case` to a mystery case's check (its seed)."""

    t: float
    exercise: str
    event: str
    passed: bool | None = None
    choice: str | None = None
    case: int | None = None


def progress_dir() -> Path:
    """Where this learner's progress lives: `$COURSE_PROGRESS_DIR`, else the user data directory.

    The user data directory follows each system's convention, so the file survives a re-clone
    of the course and never lands inside the repository.
    """
    override = os.environ.get(ENV_DIR)
    if override is not None:
        return _chosen_dir(override)
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / APP_DIR


def _chosen_dir(value: str) -> Path:
    """`$COURSE_PROGRESS_DIR` as a folder, or a clear error: set but empty, or naming a file,
    it would otherwise read as "No progress recorded yet" and save nothing."""
    if not value.strip():
        raise CourseError(
            f"{ENV_DIR} is set but empty: set it to a folder for progress.jsonl, or unset it "
            "to use your user data folder"
        )
    folder = Path(value).expanduser()
    if folder.exists() and not folder.is_dir():
        raise CourseError(
            f"{ENV_DIR}={value!r} is a file, not a folder: point it at a folder (progress.jsonl "
            "is written inside it)"
        )
    return folder


def progress_file() -> Path:
    """This learner's journal file."""
    return progress_dir() / FILENAME


def record(
    exercise: str,
    event: str,
    passed: bool | None = None,
    choice: str | None = None,
    case: int | None = None,
) -> None:
    """Append one event to the journal; never raises (progress must not break an exercise)."""
    if event not in EVENTS:
        raise ValueError(f"unknown journal event {event!r}; allowed: {EVENTS}")
    fields = asdict(Event(round(time.time(), 3), exercise, event, passed, choice, case))
    for optional in ("choice", "case"):
        if fields[optional] is None:
            del fields[optional]  # a check's line stays as it always was
    line = json.dumps(fields)
    try:
        path = progress_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")
    except (OSError, CourseError) as exc:
        if not _WARNED["write"]:
            _WARNED["write"] = True
            warnings.warn(
                f"progress is not being saved ({exc}); set {ENV_DIR} to a writable folder",
                stacklevel=2,
            )


def load(path: Path | None = None) -> list[Event]:
    """Every readable event in a journal file (none if it does not exist); bad lines skipped."""
    path = progress_file() if path is None else path
    if not path.is_file():
        return []
    events, skipped = [], []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines()):
        try:
            data = json.loads(line)
            choice, case = data.get("choice"), data.get("case")
            events.append(
                Event(
                    float(data["t"]),
                    str(data["exercise"]),
                    str(data["event"]),
                    data.get("passed"),
                    None if choice is None else str(choice),
                    None if case is None else int(case),
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            skipped.append(number + 1)
    if skipped:
        shown = ", ".join(map(str, skipped[:10])) + (", ..." if len(skipped) > 10 else "")
        warnings.warn(
            f"{path}: skipped {len(skipped)} unreadable line(s) (line {shown}); a journal line "
            'is one JSON event such as {"t": 1700000000.0, "exercise": "04.address", '
            '"event": "check", "passed": true}',
            stacklevel=2,
        )
    return events


def hint_seen(exercise: str, path: Path | None = None) -> bool:
    """Whether this learner has asked for the exercise's hint, in this session or an earlier one."""
    return any(e.exercise == exercise and e.event == "hint" for e in load(path))


def prediction(name: str, path: Path | None = None) -> str | None:
    """The choice this learner committed to for a prediction (the first one), or None."""
    return next((e.choice for e in load(path) if e.exercise == name and e.event == "predict"), None)


def case_checks(exercise: str, case: int, path: Path | None = None) -> list[Event]:
    """The checks of one mystery case's exercise (its seed), in this session or an earlier one."""
    return [
        e for e in load(path) if e.exercise == exercise and e.event == "check" and e.case == case
    ]


def exercise_events(events: Iterable[Event]) -> list[Event]:
    """The events that tell how an exercise went: checks, hints and solutions, never those of a
    name committed as a prediction."""
    events = list(events)
    predicted = {e.exercise for e in events if e.event == "predict"}
    return [e for e in events if e.event in EXERCISE_EVENTS and e.exercise not in predicted]


@dataclass(frozen=True)
class Standing:
    """Where one learner stands on one exercise."""

    exercise: str
    status: str  # "passed", "trying" (checked, not yet passed) or "not started"
    attempts: int  # checks up to and including the first pass
    hints: int
    solution: bool
    minutes: float  # first event to first pass (or to the latest event)
    last: float  # time of the latest event, 0 when none

    @property
    def notebook(self) -> str:
        return self.exercise.split(".", 1)[0]

    @property
    def done(self) -> bool:
        return self.status == "passed"


def standing(exercise: str, events: Iterable[Event]) -> Standing:
    """One exercise's standing, from one learner's events (in any order)."""
    mine = sorted((e for e in exercise_events(events) if e.exercise == exercise), key=lambda e: e.t)
    checks = [e for e in mine if e.event == "check"]
    first_pass = next((i for i, e in enumerate(checks) if e.passed), None)
    if first_pass is not None:
        status, attempts, end = "passed", first_pass + 1, checks[first_pass].t
    else:
        status, attempts = ("trying" if checks else "not started"), len(checks)
        end = mine[-1].t if mine else 0.0
    return Standing(
        exercise=exercise,
        status=status,
        attempts=attempts,
        hints=sum(e.event == "hint" for e in mine),
        solution=any(e.event == "solution" for e in mine),
        minutes=round((end - mine[0].t) / 60, 1) if mine else 0.0,
        last=mine[-1].t if mine else 0.0,
    )


def standings(events: Sequence[Event], known: Iterable[str] = ()) -> list[Standing]:
    """Every exercise that has events or is `known`, in course order (by name)."""
    names = sorted({e.exercise for e in exercise_events(events)} | set(known))
    return [standing(name, events) for name in names]


def progress_rows(events: Sequence[Event], known: Iterable[str] = ()) -> list[dict]:
    """One learner's table: a row per exercise, grouped by notebook (the name's prefix)."""
    rows = []
    for s in standings(events, known):
        rows.append(
            {
                "notebook": s.notebook,
                "exercise": s.exercise,
                "status": s.status,
                "attempts": s.attempts,
                "hints": s.hints,
                "solution": "shown" if s.solution else "",
                "minutes": s.minutes if s.status != "not started" else "",
            }
        )
    return rows


def notebook_rows(events: Sequence[Event], known: Iterable[str] = ()) -> list[dict]:
    """One learner's summary: a row per notebook, passed out of known ones."""
    by_notebook: dict[str, list[Standing]] = {}
    for s in standings(events, known):
        by_notebook.setdefault(s.notebook, []).append(s)
    return [
        {
            "notebook": notebook,
            "done": f"{sum(s.done for s in group)}/{len(group)}",
            "trying": ", ".join(s.exercise for s in group if s.status == "trying") or "-",
            "hints": sum(s.hints for s in group),
            "minutes": round(sum(s.minutes for s in group), 1),
        }
        for notebook, group in sorted(by_notebook.items())
    ]


def progress_table(events: Sequence[Event], known: Iterable[str] = ()) -> str:
    """One learner's progress as text: a line per notebook, then a table per notebook."""
    known = list(known)
    if not events and not known:
        return "No progress recorded yet: run an exercise's check(...) cell."
    by_notebook: dict[str, list[dict]] = {}
    for row in progress_rows(events, known):
        by_notebook.setdefault(row.pop("notebook"), []).append(row)
    parts = [text_table(notebook_rows(events, known))]
    parts += [f"notebook {nb}\n{text_table(rows)}" for nb, rows in sorted(by_notebook.items())]
    return "\n\n".join(parts)


def learner_files(directory: Path) -> dict[str, Path]:
    """Each learner's journal under a folder gathered by an instructor.

    Two layouts: `DIR/<learner>.jsonl` (files copied into one folder), and
    `DIR/<learner>/.../progress.jsonl` (home folders, e.g. `--collect /home` on a JupyterHub
    machine). The learner's name is the file's stem or the first folder under DIR.
    """
    if not directory.is_dir():
        raise FileNotFoundError(f"no folder {directory} to collect progress files from")
    found = {p.stem: p for p in sorted(directory.glob("*.jsonl")) if p.stem != "progress"}
    for path in sorted(directory.rglob(FILENAME)):
        parts = path.relative_to(directory).parts
        found.setdefault(parts[0] if len(parts) > 1 else "progress", path)
    return found


def idle_text(minutes: float) -> str:
    """Idle time as a person reads it: minutes, then hours, then days, capped at a month."""
    if minutes < 60:
        return f"{round(minutes)} min"
    if minutes < 48 * 60:
        return f"{round(minutes / 60)} h"
    days = round(minutes / (24 * 60))
    return f"{days} d" if days <= 30 else "> 30 d"


def stuck(s: Standing, now: float) -> bool:
    """3+ failed checks, and none in the last few minutes: not a learner iterating right now."""
    return (
        s.status == "trying"
        and s.attempts >= STUCK_ATTEMPTS
        and (now - s.last >= STUCK_QUIET_MINUTES * 60)
    )


def class_rows(journals: dict[str, Sequence[Event]], now: float | None = None) -> list[dict]:
    """A room at a glance: a row per learner, where they are and whether they look stuck."""
    now = time.time() if now is None else now
    rows = []
    for learner, events in sorted(journals.items()):
        table = standings(events)
        trying = [s for s in table if s.status == "trying"]
        current = max(trying, key=lambda s: s.last, default=None)
        last = max((e.t for e in events), default=0.0)  # a prediction is activity too
        cases = [e.case for e in sorted(events, key=lambda e: e.t) if e.case is not None]
        rows.append(
            {
                "learner": learner,
                "done": sum(s.done for s in table),
                "solutions": sum(s.solution for s in table),
                "predictions": len({e.exercise for e in events if e.event == "predict"}),
                "working on": current.exercise if current else "-",
                "attempts": current.attempts if current else "",
                "hints": current.hints if current else "",
                "stuck": "STUCK" if current and stuck(current, now) else "",
                "idle": idle_text(max(0.0, now - last) / 60) if last else "",
                "case": cases[-1] if cases else "",
            }
        )
    return rows


def exercise_rows(journals: dict[str, Sequence[Event]], now: float | None = None) -> list[dict]:
    """A room per exercise: who passed (and how many of them after the solution was shown),
    who is still trying (and stuck)."""
    now = time.time() if now is None else now
    names = sorted({e.exercise for events in journals.values() for e in exercise_events(events)})
    rows = []
    for name in names:
        table = {learner: standing(name, events) for learner, events in journals.items()}
        rows.append(
            {
                "exercise": name,
                "passed": sum(s.status == "passed" for s in table.values()),
                "solution shown": sum(s.solution for s in table.values()),
                "trying": sum(s.status == "trying" for s in table.values()),
                "stuck": ", ".join(sorted(lr for lr, s in table.items() if stuck(s, now))) or "-",
            }
        )
    return rows


def collect_table(directory: Path, now: float | None = None) -> str:
    """The instructor's view of every learner's journal under `directory`."""
    journals = {name: load(path) for name, path in learner_files(directory).items()}
    if not journals:
        return f"No progress files under {directory} (expected <learner>.jsonl files)."
    return (
        f"{len(journals)} learner{'' if len(journals) == 1 else 's'} "
        f"(STUCK: {STUCK_ATTEMPTS}+ failed checks, not yet passed, none in the last "
        f"{STUCK_QUIET_MINUTES} minutes; done: passed; "
        "solutions: exercises whose reference solution the learner was shown)\n\n"
        f"{text_table(class_rows(journals, now))}\n\n{text_table(exercise_rows(journals, now))}"
    )
