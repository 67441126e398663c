"""The course map: one entry per notebook, shared by 00_start_here, the doctor and the site.

Keeping the list in one place means the start notebook, the README table, `python -m course
doctor` and the static site can never disagree about what the course contains. Which code each
notebook uses is not written here: `code_packages` reads it from the notebook's own imports, so
the map cannot drift (tests/test_catalog.py holds README's table to it). `with_dependencies`
follows those imports through the package, so `make notebooks` knows which files a notebook's
stored outputs depend on.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"


@dataclass(frozen=True)
class Lesson:
    """One notebook: its file, the question it answers, and what it needs to run fully.

    `preview` asks the question as the course map of notebook 00 shows it, before the
    investigation starts: where the lesson goes, never what an earlier lesson finds (the
    lesson's own question may name it, once the learner has found it). Empty when the question
    gives nothing away."""

    filename: str
    title: str
    question: str
    minutes: int
    goals: tuple[str, ...]
    needs: frozenset[str] = field(default_factory=frozenset)  # e.g. {"compiler"}
    preview: str = ""
    checks: tuple[str, ...] = ()  # the modules that register its exercises and predictions

    @property
    def preview_question(self) -> str:
        """The question as a learner may read it before lesson 01: `preview`, else `question`."""
        return self.preview or self.question


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "00_start_here.ipynb",
        "Start here",
        "Is my machine ready, and how does this course work?",
        15,
        (
            "run the environment doctor",
            "check that widgets render",
            "try an answer, a function and a prediction",
            "see your saved progress",
        ),
        checks=("course.start.exercises",),
    ),
    Lesson(
        "01_the_plateau.ipynb",
        "The plateau",
        "Why does this sparse autoencoder stop learning, whatever the hyperparameters?",
        60,
        (
            "measure how low the loss could go",
            "try to tune the plateau away",
            "write the check of which weights never moved",
        ),
        checks=("course.story.exercises",),
    ),
    Lesson(
        "02_isolating.ipynb",
        "Isolating the bug",
        "Which component is broken: gradients, the optimizer, the dtype or the device?",
        105,
        (
            "write one controlled experiment per suspect",
            "read Adam's state yourself",
            "compare tensor metadata",
        ),
        checks=("course.isolation.exercises",),
    ),
    Lesson(
        "03_inside_adam.ipynb",
        "Inside Adam",
        "What does Adam actually do, and which of its operations break?",
        90,
        (
            "write Adam from scratch, bitwise",
            "test each of its in-place ops alone",
            "measure which versions lose the writes",
            "break two ops one at a time",
        ),
        preview="What does one optimizer step do, one operation at a time?",
        checks=("course.adam.exercises",),
    ),
    Lesson(
        "04_strides.ipynb",
        "Strides and memory layout",
        "Why was the encoder non-contiguous, and what does that even mean?",
        70,
        (
            "compute an element's address",
            "write the layout rules of .T, slicing and permute",
            "write torch's contiguity rule",
            "trace the story's initialisation to the encoder's stride",
        ),
        preview="What does a tensor hold besides its values, and where does that come from?",
        checks=("course.layout.exercises",),
    ),
    Lesson(
        "05_dispatch.ipynb",
        "The dispatcher",
        "How does one Python call end up in a device-specific kernel?",
        60,
        (
            "follow the registry to a backend's kernel",
            "walk the live dispatch table",
            "plant the 2.2.1 bug in your CPU's table",
            "define an op with a fake kernel",
        ),
        checks=("course.dispatch.exercises",),
    ),
    Lesson(
        "06_placeholder.ipynb",
        "The Placeholder",
        "How can a kernel compute the right answer and still lose it?",
        90,
        (
            "write the test that would have caught it",
            "read the broken kernel beside a working sibling",
            "fix it under the device's contract",
            "write an output placeholder",
            "see what macOS 15 changed",
        ),
        frozenset({"sources"}),  # PyTorch's kernel source, cached by `make fetch-sources`
        preview="What does a device's kernel do with the tensors it is handed?",
        checks=("course.kernels.exercises.placeholder",),
    ),
    Lesson(
        "07_compiled_kernels.ipynb",
        "Compiled kernels",
        "Can a compiled C++ kernel lose its result too, and what does getting layout right cost?",
        105,
        (
            "predict the naive kernel's scramble",
            "write a C++ kernel right on every layout",
            "tile a loop for the cache",
            "beat ATen on a transposed output",
        ),
        frozenset({"compiler"}),
        preview="What must a compiled C++ kernel get right, and what does getting it right cost?",
        checks=("course.kernels.exercises.compiled",),
    ),
    Lesson(
        "08_pattern_strikes_again.ipynb",
        "The pattern strikes again",
        "Where else does the same bug hide, and can a tool find it for us?",
        75,
        (
            "write the auditor's judges, for exact and for random ops",
            "audit backends nobody has printed",
            "see PyTorch's own tests miss the in-place bug",
            "find a real bug in your CPU build",
        ),
        checks=("course.audit.exercises",),
    ),
    Lesson(
        "09_case_closed.ipynb",
        "Case closed",
        "How do we fix the model, and what do we check first next time?",
        50,
        (
            "write fix 1 and train all three fixes",
            "recover the ground-truth features",
            "write the checklist's checks of a model and of its optimizer's state",
        ),
        checks=("course.casefile.exercises",),
    ),
    Lesson(
        "10_your_case.ipynb",
        "Your own case",
        "Can you find a bug you have never seen, on your own, with the tools of this course?",
        40,
        (
            "reproduce an unseen bug in one op under one condition",
            "name the culprit op and condition",
            "fix the model, not the device",
        ),
    ),
)


@dataclass(frozen=True)
class RoomSlot:
    """One lesson's part of a 3-hour workshop: its minutes in the room, what the room does (exercise
    and prediction names, or a short description), and what is left as homework."""

    lesson: str  # the notebook's number, "03"
    minutes: int
    room: tuple[str, ...]
    homework: tuple[str, ...] = ()


# A 3-hour room (180 minutes, no break; for a 10-minute break, make 09 homework): the spine of
# the investigation, the rest as homework; sections a notebook marks *(optional)* are always cut.
# README's workshop table and the instructor's guides are generated from this one list.
ROOM: tuple[RoomSlot, ...] = (
    RoomSlot("00", 0, ("set-up at home, with `00.on_emps` and `00.device_type`",)),
    RoomSlot(
        "01",
        20,
        ("the plateau", "two sweep runs", "01.how_many_frozen", "01.snapshot", "01.frozen_names"),
        ("01.floor", "01.loss_floor", "01.frozen"),
    ),
    RoomSlot(
        "02",
        35,
        (
            "02.two_variables",
            "02.did_not_move",
            "02.sgd_step",
            "02.encoder_moves",
            "02.adam_state",
            "02.zero_pattern",
        ),
        (
            "02.grad_check",
            "02.update_size",
            "02.frozen_after",
            "02.differences",
            "02.float32_run",
            "02.float64_run",
            "02.contiguous_run",
            "02.contiguous",
        ),
    ),
    RoomSlot(
        "03",
        25,
        ("03.which_ops", "03.isolate_op", "03.lost_ops", "03.which_explodes"),
        ("03.adam_step", "bias correction"),
    ),
    RoomSlot(
        "04",
        25,
        ("04.address", "04.is_contiguous", "04.clone_layout"),
        ("04.view_rules", "04.make_contiguous", "04.transpose_writes", "04.find_mps_bug"),
    ),
    RoomSlot(
        "05",
        10,
        (
            "instructor demo of the dispatch explorer and the registry rows",
            "05.mps_kernel",
            "05.override",
        ),
        ("05.kernel_for", "05.keys_that_run", "05.custom_op", "05.binding", "05.call_order"),
    ),
    RoomSlot(
        "06",
        35,
        ("06.lost_write", "06.kernel_test", "06.fix_addcmul"),
        ("06.output_placeholder", "06.macos15"),
    ),
    RoomSlot(
        "08", 15, ("08.lost_writes",), ("08.verdict", "08.random_verdict", "08.which_layouts")
    ),
    RoomSlot(
        "09",
        10,
        ("09.which_fixes", "09.tie_weights"),
        ("09.suspects", "09.state_suspects"),
    ),
    RoomSlot("", 5, ("wrap-up: what we learned",), ("07 (compiled C++)", "10 (your own case)")),
)


def room_slot(entry: Lesson) -> RoomSlot | None:
    """A lesson's part of the 3-hour room, or None when the whole lesson is homework."""
    return next((s for s in ROOM if s.lesson == entry.filename[:2] and s.lesson), None)


def room_table() -> str:
    """README's workshop table, from `ROOM`."""
    rows = ["| time | notebook | in the room | homework |", "|---|---|---|---|"]
    for slot in ROOM:
        room, home = (
            ", ".join(f"`{i}`" if EXERCISE_NAME.fullmatch(f'"{i}"') else i for i in items)
            for items in (slot.room, slot.homework)
        )
        rows.append(f"| {slot.minutes or 'before'} | {slot.lesson} | {room} | {home} |")
    return "\n".join(rows)


def lesson(filename: str) -> Lesson:
    """Return the catalogue entry for a notebook file name."""
    for entry in LESSONS:
        if entry.filename == filename:
            return entry
    names = ", ".join(e.filename for e in LESSONS)
    raise KeyError(f"no lesson named {filename!r}; the course has: {names}")


COURSE_DIR = Path(__file__).resolve().parent


def module_file(name: str) -> Path | None:
    """The file of a course module ("course.story.plateau"), found without importing it."""
    parts = name.split(".")
    if parts[0] != "course":
        return None
    base = COURSE_DIR.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def python_source(cell_source: str) -> str:
    """A code cell's text with IPython magics and shell lines (`%time`, `!pip`) made `pass`, at
    their indentation, so `ast` can read the rest of the cell."""
    return "\n".join(
        (line[: len(line) - len(line.lstrip())] + "pass")
        if line.lstrip()[:1] in ("%", "!")
        else line
        for line in cell_source.split("\n")
    )


def imported_modules(source: str) -> set[str]:
    """The course modules some Python source imports, at any depth (inside functions too).

    `from course.x import y` counts course.x, and course.x.y when y is a module of its own."""
    try:
        tree = ast.parse(python_source(source))
    except SyntaxError:  # a cell that is not Python at all imports nothing
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("course"):
            found.add(node.module)
            found |= {
                f"{node.module}.{a.name}"
                for a in node.names
                if module_file(f"{node.module}.{a.name}") is not None
            }
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("course")}
    return {name for name in found if module_file(name) is not None}


EXERCISE_NAME = re.compile(r"""["'](\d\d\.\w+)["']""")


def exercise_names(source: str) -> set[str]:
    """The exercise and prediction names some source spells out ("02.sgd_step")."""
    return set(EXERCISE_NAME.findall(source))


def modules_defining(names: set[str]) -> set[str]:
    """The course modules whose source spells out any of these exercise names.

    Why: a notebook reaches its checkers only through `check("02.sgd_step", ...)`, never by an
    import, yet their PASSED and NOT YET lines are stored outputs; a changed checker makes the
    notebook stale as surely as a changed import does.
    """
    if not names:
        return set()
    found = set()
    for path in COURSE_DIR.rglob("*.py"):
        if exercise_names(path.read_text(encoding="utf-8")) & names:
            parts = path.relative_to(COURSE_DIR.parent).with_suffix("").parts
            found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def with_dependencies(modules: set[str]) -> tuple[str, ...]:
    """The modules, their packages' `__init__`s and every course module they import, transitively.

    What a notebook's stored outputs depend on: change any of these files and they may be stale.
    """
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # importing runs __init__s
        todo += sorted(imported_modules(module_file(name).read_text(encoding="utf-8")))
    return tuple(sorted(seen))


def dependency_files(modules: tuple[str, ...]) -> list[Path]:
    """The files behind modules: each module's source, and the data files (a kernel's C++
    source) that sit beside a package's `__init__.py`."""
    files: set[Path] = set()
    for name in modules:
        path = module_file(name)
        files.add(path)
        if path.name == "__init__.py":
            files |= {
                p for p in path.parent.iterdir() if p.is_file() and p.suffix not in (".py", ".pyc")
            }
    return sorted(files)


def notebook_modules(filename: str, notebook_dir: Path = NOTEBOOK_DIR) -> set[str]:
    """The course modules a notebook's code cells import themselves."""
    cells = json.loads((notebook_dir / filename).read_text(encoding="utf-8"))["cells"]
    modules: set[str] = set()
    for cell in cells:
        if cell["cell_type"] == "code":
            modules |= imported_modules("".join(cell["source"]))
    return modules


def code_packages(filename: str, notebook_dir: Path = NOTEBOOK_DIR) -> tuple[str, ...]:
    """The course packages a notebook imports, read from its code cells (e.g. "course.story").

    A subpackage's modules count as the subpackage; top-level shared pieces (`course.ui`,
    `course.exercises`, ...) count as themselves.
    """
    modules = notebook_modules(filename, notebook_dir) - {"course"}
    return tuple(sorted({".".join(m.split(".")[:2]) for m in modules}))


def readme_table(notebook_dir: Path = NOTEBOOK_DIR) -> str:
    """README's table of notebooks, built from this catalogue and the notebooks' own imports."""
    rows = [
        "| notebook | question | you will | min | code in |",
        "|---|---|---|---|---|",
    ]
    for entry in LESSONS:
        packages = [
            p for p in code_packages(entry.filename, notebook_dir) if p != "course.exercises"
        ]
        code = ", ".join(f"`{p}`" for p in packages)
        name = entry.filename.removesuffix(".ipynb")
        rows.append(
            f"| {name} | {entry.question} | {'; '.join(entry.goals)} | {entry.minutes} | {code} |"
        )
    return "\n".join(rows)
