"""The course map: one entry per notebook, shared by 00_start_here, the doctor and the site.

Keeping the list in one place means the start notebook, the README table (checked by a test),
`python -m course doctor` and the static site can never disagree about what the course contains.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Lesson:
    """One notebook: its file, the question it answers, and what it needs to run fully."""

    filename: str
    title: str
    question: str
    minutes: int
    goals: tuple[str, ...]
    modules: tuple[str, ...]
    needs: frozenset[str] = field(default_factory=frozenset)  # e.g. {"compiler"}


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "00_start_here.ipynb",
        "Start here",
        "Is my machine ready, and how does this course work?",
        10,
        ("run the environment doctor", "check that widgets render"),
        ("course.doctor", "course.catalog", "course.ui"),
    ),
    Lesson(
        "01_the_plateau.ipynb",
        "The plateau",
        "Why does this sparse autoencoder stop learning, whatever the hyperparameters?",
        25,
        ("reproduce the plateau on the emulated MPS device", "see that the encoder never moves"),
        ("course.emps", "course.sae", "course.training", "course.plateau", "course.sweep"),
    ),
    Lesson(
        "02_isolating.ipynb",
        "Isolating the bug",
        "Which component is broken: gradients, the optimizer, the dtype or the device?",
        30,
        ("rule out gradients and SGD", "find the exp_avg_sq = 0 paradox", "spot the stride"),
        ("course.emps", "course.isolate", "course.plateau", "course.mps_check"),
    ),
    Lesson(
        "03_inside_adam.ipynb",
        "Inside Adam",
        "What does Adam actually do, and which of its operations break?",
        30,
        ("write Adam from scratch", "read the installed adam.py", "trace one step's aten ops"),
        ("course.adam", "course.tracer", "course.switchboard"),
    ),
    Lesson(
        "04_strides.ipynb",
        "Strides and memory layout",
        "Why was the encoder non-contiguous, and what does that even mean?",
        30,
        ("predict strides of view chains", "see why clone preserves layout"),
        (
            "course.layout",
            "course.view_or_copy",
            "course.opchain",
            "course.strides",
            "course.strides_exercises",
            "course.memory_timing",
        ),
    ),
    Lesson(
        "05_dispatch.ipynb",
        "The dispatcher",
        "How does one Python call end up in a device-specific kernel?",
        30,
        ("read native_functions.yaml", "read live dispatch tables", "register a kernel"),
        (
            "course.registry",
            "course.dispatch",
            "course.dispatch_explorer",
            "course.registration",
            "course.tracer",
            "course.emps",
        ),
    ),
    Lesson(
        "06_kernels.ipynb",
        "Kernels",
        "How can a kernel compute the right answer and still lose it?",
        40,
        ("fix the Placeholder bug", "compile three C++ kernels", "benchmark against ATen"),
        ("course.emps", "course.placeholder_lab", "course.cpp"),
        frozenset({"compiler"}),
    ),
    Lesson(
        "07_pattern_strikes_again.ipynb",
        "The pattern strikes again",
        "Where else does the same bug hide, and can a tool find it for us?",
        25,
        ("run the layout auditor", "see the random-op bug", "why the abstraction leaked"),
        ("course.audit", "course.audit_args", "course.audit_judge", "course.audit_report"),
    ),
    Lesson(
        "08_case_closed.ipynb",
        "Case closed",
        "How do we fix the model, and what do we check first next time?",
        20,
        ("fix the SAE three ways", "recover the ground-truth features", "use the checklist"),
        ("course.checklist", "course.case_closed", "course.features", "course.plateau"),
    ),
)


def lesson(filename: str) -> Lesson:
    """Return the catalogue entry for a notebook file name."""
    for entry in LESSONS:
        if entry.filename == filename:
            return entry
    names = ", ".join(e.filename for e in LESSONS)
    raise KeyError(f"no lesson named {filename!r}; the course has: {names}")
