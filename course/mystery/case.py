"""open_case: one mystery case, the device it runs on, and the checkers that judge the learner.

    case = open_case(seed=1234)
    print(case.brief)
    report = case.run_scenario()
    with case.use_device():
        ...                              # your experiments, on case.device
    case.check_repro(repro)              # repro() -> bool
    case.check_culprit("mul_", "transposed")
    case.check_fix(patch)                # patch(model) -> model
    case.hint()                          # the next step of the method, never the answer

The seed picks the case from the pool, so an instructor can open what a learner sees; the
scenario itself always trains on `scenarios.SEED` (see there why). Every checker returns a
`course.exercises.Verdict`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import random
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch import nn

from course import emps
from course.errors import CourseError, require_choice
from course.exercises import _INSTRUCTOR as INSTRUCTOR_STATE
from course.exercises import NOT_ATTEMPTED, Text, Verdict, failed, passed
from course.layout.named import require_layout
from course.mystery import hints
from course.mystery.bugs import (
    CONDITIONS,
    EFFECTS,
    LAYOUT_CONDITIONS,
    bug_free_backend,
    planted_backend,
)
from course.mystery.cases import POOL, CaseSpec, get_case
from course.mystery.scenarios import (
    SCENARIOS,
    SEED,
    Patch,
    Scenario,
    ScenarioReport,
    data_of,
    loss,
    run,
    setup,
)

SEED_LIMIT = 2**31
# The in-place ops a culprit may be: those the scenarios run, and a few more to choose from.
OPS = (
    "add_",
    "addcdiv_",
    "addcmul_",
    "clamp_",
    "div_",
    "fill_",
    "lerp_",
    "masked_fill_",
    "mul_",
    "normal_",
    "relu_",
    "sqrt_",
    "sub_",
    "uniform_",
    "zero_",
)
# What a learner copy's untouched solution region raises (scripts/make_learner_copies.py).
SCAFFOLD = "your code here"
# A fix must train as the bug-free run does, within these margins.
ACCURACY_MARGIN = 0.05
LOSS_FACTOR = 1.3


def choose(seed: int) -> CaseSpec:
    """The case a seed opens (a shuffled pick, so neighbouring seeds give unrelated cases)."""
    return POOL[random.Random(seed).randrange(len(POOL))]


def open_case(seed: int | None = None, *, case_id: str | None = None) -> Case:
    """Open the case a seed picks (a random seed if none); instructors may name a case_id."""
    if seed is None:
        seed = secrets.randbelow(1_000_000)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise CourseError(f"seed={seed!r} is not allowed; use a whole number 0 to {SEED_LIMIT - 1}")
    spec = get_case(case_id) if case_id is not None else choose(seed)
    return Case(spec, seed)


@functools.lru_cache(maxsize=len(SCENARIOS))
def _bug_free_run(scenario: str) -> ScenarioReport:
    with emps.use_backend(bug_free_backend()):
        return run(SCENARIOS[scenario], SEED)


def _normalised_op(op: object) -> str:
    """ "aten::mul_.Tensor", "torch.mul_", "mul" -> "mul_"; CourseError for anything else."""
    name = str(op).strip().removesuffix("()")
    for prefix in ("aten::", "torch.Tensor.", "Tensor.", "torch."):
        name = name.removeprefix(prefix)
    name = name.split(".")[0]
    name = name if name.endswith("_") else f"{name}_"
    if name not in OPS:
        raise CourseError(f"op={op!r} is not one of the suspects; choose one of: {', '.join(OPS)}")
    return name


def _blank(answer: object) -> bool:
    """A learner copy's untouched answer: `...` (or None) where a function or name belongs."""
    return answer is Ellipsis or answer is None


def _not_attempted(exc: BaseException | None = None) -> Verdict | None:
    """ "Not attempted yet" for a blank answer or the scaffold's NotImplementedError, else None."""
    if exc is None:
        return failed(f"{NOT_ATTEMPTED}: replace the `...` with your answer, then run the cell.")
    if isinstance(exc, NotImplementedError) and str(exc) == SCAFFOLD:
        return failed(f"{NOT_ATTEMPTED}: your function still raises NotImplementedError.")
    return None


def _as_bool(value: object) -> bool | None:
    """A repro's answer as a bool (a 1-element bool tensor counts), or None if it is not one."""
    if isinstance(value, bool):
        return value
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.dtype == torch.bool:
        return bool(value.item())
    return None


@dataclass(frozen=True)
class Answer:
    """The solution of a case, for instructors."""

    op: str
    layout: str
    what_goes_wrong: str
    decoy: str
    fix: Patch
    repro: Callable[[], bool]

    def __str__(self) -> str:
        return "\n".join(
            [
                f"culprit: {self.op} on {self.layout} outputs ({CONDITIONS[self.layout][0]})",
                f"what the kernel does: {self.what_goes_wrong}",
                f"decoy for check_repro: {self.decoy}",
                "",
                "reference repro:",
                inspect.getsource(self.repro),
                "reference fix:",
                inspect.getsource(self.fix),
            ]
        )

    __repr__ = __str__


class Case:
    """One mystery: a brief, a device with one planted bug, a scenario, and three checkers."""

    device = emps.DEVICE

    def __init__(self, spec: CaseSpec, seed: int) -> None:
        self._spec = spec
        self.seed = seed
        self._judging = False  # True while a checker runs the learner's code on its own device
        self._hints_given = 0

    # --- what the learner reads ------------------------------------------------------------

    @property
    def id(self) -> str:
        """The case's id in the pool (it names nothing of the cause)."""
        return self._spec.id

    @property
    def title(self) -> str:
        """A short title, from the symptom."""
        return self._spec.title

    @property
    def brief(self) -> str:
        """The bug report, as a user would write it."""
        return self._spec.brief

    @property
    def scenario(self) -> Scenario:
        """The training scenario of this case."""
        return SCENARIOS[self._spec.scenario]

    def describe(self) -> Text:
        """Title, seed, the user's report and what the scenario is."""
        return Text(
            f"{self.id}: {self.title}   (seed {self.seed})\n\n{self.brief}\n\n"
            f"The scenario: {self.scenario.description}; {self.scenario.recipe()}.\n"
            "Read its code with case.source(); run it with case.run_scenario()."
        )

    def source(self) -> Text:
        """The code of the scenario's model: what the user wrote, and what a patch may change."""
        parts = [inspect.getsource(obj) for obj in self.scenario.code]
        return Text(f"# training: {self.scenario.recipe()}\n\n" + "\n\n".join(parts))

    @staticmethod
    def layouts() -> Text:
        """The layout conditions check_culprit accepts, with what each means."""
        return Text("\n".join(f"{name:<20} {text}" for name, (text, _) in CONDITIONS.items()))

    def hint(self, step: int | None = None) -> Text:
        """The next step of the method (or a given step, 1-based)."""
        if step is None:
            self._hints_given = min(self._hints_given + 1, len(hints.STEPS))
            step = self._hints_given
        return Text(hints.hint_text(step))

    # --- the device and the scenario -------------------------------------------------------

    @property
    def backend(self) -> emps.Backend:
        """The case's emulated backend (for tools that take one, e.g. the auditor)."""
        return planted_backend(self._spec.bug)

    @contextlib.contextmanager
    def use_device(self) -> Iterator[str]:
        """Run a block on the case's device; inside a checker, on the device under test."""
        if self._judging:
            yield self.device
            return
        with emps.use_backend(self.backend):
            yield self.device

    def model(self, device: str | None = None) -> nn.Module:
        """The scenario's model as the scenario builds it, on the case's device (or "cpu")."""
        device = self._device(device)
        with self.use_device():
            return setup(self.scenario, SEED, device)[0]

    def optimizer(self, model: nn.Module) -> torch.optim.Optimizer:
        """The scenario's optimizer for a model."""
        return self.scenario.optimizer(list(model.parameters()))

    def step(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> float:
        """One full-batch training step of the scenario; returns the loss before the step."""
        device = next(model.parameters()).device
        data = data_of(self.scenario, SEED)
        with self.use_device():
            optimizer.zero_grad()
            value = loss(self.scenario, model, data.x.to(device), data.y.to(device))
            value.backward()
            optimizer.step()
        return value.item()

    def run_scenario(
        self, patch: Patch | None = None, device: str | None = None, quiet: bool = False
    ) -> ScenarioReport:
        """Train the scenario (on the case's device, or device="cpu"), optionally patched."""
        device = self._device(device)
        steps = self.scenario.steps

        def progress(step: int, total: int, note: str) -> None:
            if step % max(1, steps // 4) == 0 or step == total:
                print(f"  step {step:>3}/{total}  {note}", flush=True)

        if not quiet:
            print(f"training {self.scenario.name} on {device}:")
        with self.use_device():
            return run(self.scenario, SEED, device, patch, None if quiet else progress)

    def _device(self, device: str | None) -> str:
        if device in (None, "emps", self.device):
            return self.device
        require_choice("device", device, (self.device, "cpu"))
        return device

    # --- the checkers ----------------------------------------------------------------------

    def _on(self, backend: emps.Backend, fn: Callable[[], object], seed: int) -> object:
        """Call fn on a backend, with torch's global RNG seeded (and restored afterwards)."""
        with torch.random.fork_rng(devices=[]), emps.use_backend(backend):
            torch.manual_seed(seed)
            self._judging = True
            try:
                return fn()
            finally:
                self._judging = False

    def check_repro(self, repro: Callable[[], object], seed: int | None = None) -> Verdict:
        """Judge a minimal reproduction: True on this bug, False on no bug and on another bug."""
        if _blank(repro):
            return _not_attempted()
        if not callable(repro):
            return failed(
                "pass your function itself: case.check_repro(repro), without calling it",
                type(repro).__name__,
                "a function",
            )
        runs = (
            (
                "on the case's device",
                self.backend,
                True,
                "it does not show the bug. Run the suspect op on a layout the bug needs, on "
                "case.device, and compare with the CPU.",
            ),
            (
                "on the same device with the bug removed",
                bug_free_backend(),
                False,
                "it cannot tell this bug from no bug at all (a repro that always says True, or "
                "compares against a reference that is itself off, does that).",
            ),
            (
                "on a device with a different planted bug",
                planted_backend(self._spec.decoy),
                False,
                "it shows that something is wrong, not that this bug is there. A copy of the "
                "scenario does that: narrow it down to one op on one layout.",
            ),
        )
        chooser = random.Random(seed) if seed is not None else random.SystemRandom()
        for where, backend, expected, why in runs:
            torch_seed = chooser.randrange(SEED_LIMIT)
            try:
                answer = self._on(backend, repro, torch_seed)
            except Exception as exc:
                return _not_attempted(exc) or failed(
                    f"{where} (torch seed {torch_seed}) your repro raised "
                    f"{type(exc).__name__}: {exc}"
                )
            value = _as_bool(answer)
            if value is None:
                return failed(
                    f"{where} your repro returned {answer!r}: return True or False",
                    type(answer).__name__,
                    "bool",
                )
            if value != expected:
                return failed(
                    f"{where} (torch seed {torch_seed}) your repro returned {value}: {why}",
                    value,
                    expected,
                )
        return passed(
            "a minimal reproduction: it shows this bug, and stays quiet on a healthy device and "
            "on a device with another bug (each run with fresh random numbers)"
        )

    def check_culprit(self, op: str, layout: str) -> Verdict:
        """Judge the culprit: an in-place op (see OPS) and a layout condition (case.layouts())."""
        if _blank(op) or _blank(layout):
            return _not_attempted()
        name = _normalised_op(op)
        layout = require_layout(layout, LAYOUT_CONDITIONS)
        bug = self._spec.bug
        yours = f"{name} on {layout}"
        if name == bug.op and layout == bug.condition:
            return passed(f"{yours}: that is the planted bug")
        if name != bug.op and layout != bug.condition:
            return failed(
                f"{yours}: neither the op nor the layout condition is right. Go back to the "
                "recording and test the suspects one at a time"
            )
        if name != bug.op:
            return failed(
                f"{yours}: the layout condition is right, the op is not. Which op writes the "
                "tensor that goes wrong? Test the other ops on that layout"
            )
        if layout == "any-non-contiguous":
            return failed(
                f"{yours}: the op is right, but the bug is narrower than 'any non-contiguous "
                "output'. Test the op on each layout separately: some of them work"
            )
        return failed(
            f"{yours}: the op is right, the layout condition is not. Vary the output's layout "
            "(and dtype) alone and see which one breaks it"
        )

    def check_fix(self, patch: Patch) -> Verdict:
        """Judge a fix: patch(model) -> model, trained on the buggy device, must train healthily."""
        if _blank(patch):
            return _not_attempted()
        if not callable(patch):
            return failed(
                "pass your function itself, without calling it: case.check_fix(patch), where "
                "patch(model) returns the fixed model",
                type(patch).__name__,
                "a function",
            )
        try:
            report = self.run_scenario(patch=patch, quiet=True)
        except CourseError as exc:
            return failed(str(exc))
        except Exception as exc:
            return _not_attempted(exc) or failed(
                f"training with your patch raised {type(exc).__name__}: {exc}"
            )
        healthy = _bug_free_run(self.scenario.name)
        return _judge_fix(report, healthy, self._spec.symptom.shows(report, healthy))

    # --- for instructors -------------------------------------------------------------------

    def answer(self) -> Answer:
        """The culprit, the layout condition, the fix and the reference repro (instructors only)."""
        if not INSTRUCTOR_STATE["on"]:
            raise CourseError(
                "answer() is for instructors: call course.exercises.instructor_mode(True) or set "
                "COURSE_INSTRUCTOR=1 first. Stuck? case.hint() gives the next step of the method."
            )
        spec = self._spec
        return Answer(
            spec.bug.op,
            spec.bug.condition,
            EFFECTS[spec.bug.effect].__doc__ or spec.bug.effect,
            f"{spec.decoy.op} on {spec.decoy.condition} outputs, same effect",
            spec.fix,
            spec.repro,
        )

    def __repr__(self) -> str:
        return f"<mystery {self.id} {self.title!r}, seed {self.seed}: print(case.brief)>"


def _judge_fix(report: ScenarioReport, healthy: ScenarioReport, symptom: bool) -> Verdict:
    """Does a patched run on the buggy device train like the bug-free run?"""
    mine = f"final loss {report.final_loss:.4g}, held-out {report.metric:.4g}"
    theirs = f"final loss {healthy.final_loss:.4g}, held-out {healthy.metric:.4g}"
    if report.blew_up:
        return failed("with your patch the loss still blows up on the case's device", mine, theirs)
    if report.frozen():
        return failed(
            f"with your patch, not one element of {', '.join(report.frozen())} changes on the "
            "case's device",
            mine,
            theirs,
        )
    if report.task == "classify":
        worse = report.metric < healthy.metric - ACCURACY_MARGIN
    else:
        worse = not report.metric <= healthy.metric * LOSS_FACTOR
    if symptom or worse or not report.final_loss <= healthy.final_loss * LOSS_FACTOR + 0.01:
        return failed(
            "with your patch the scenario still trains worse on the case's device than on a "
            "healthy one: the layout that triggers the bug is still there",
            mine,
            theirs,
        )
    return passed("with your patch the scenario trains on the case's device as on a healthy one")
