"""open_case: one generated mystery case, its device, and the checkers that judge the learner.

    case = open_case(seed=1234)
    print(case.describe())                 # the user's report, measured on this case's run
    report = case.run_scenario()
    with case.use_device():
        ...                                # your experiments, on case.device
    case.check_repro(repro)                # repro() -> bool
    case.check_culprit("mul_", "large")    # only after a passing repro; 3 tries
    case.check_fix(patch)                  # patch(model) -> model
    case.hint()                            # the next step of the method, never the answer

The seed generates the case (course.mystery.generate), so an instructor opens what a learner
sees. Every checker returns a `course.exercises.Verdict` and is saved to the learner's journal
as "10.repro", "10.culprit" and "10.fix", so the cases show in `python -m course progress`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import secrets
import textwrap
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy
import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

from course import emps, journal
from course.errors import CourseError, require_choice, require_seed
from course.exercises import _INSTRUCTOR as INSTRUCTOR_STATE
from course.exercises import NOT_ATTEMPTED, Text, Verdict, failed, is_scaffold, passed, solutions
from course.exercises.registry import lesson_of
from course.mystery import guard, hints, models
from course.mystery.answers import NotAnAnswer, judge_fix, op_name
from course.mystery.answers import condition as condition_named
from course.mystery.bugs import bug_free_backend, harmless_backend, planted_backend, times_fired
from course.mystery.conditions import CONDITIONS, pattern
from course.mystery.detours import Detour, Detours
from course.mystery.effects import EFFECTS
from course.mystery.families import Design
from course.mystery.fixes import RECIPE, RECIPE_HABITS
from course.mystery.generate import CaseSpec, generate
from course.mystery.scenarios import USER_NAMES, Patch, Scenario, ScenarioReport, apply_patch, run
from course.mystery.symptoms import Finding, brief, observe, title

TRIES = 3  # wrong culprits before check_culprit sends the learner back to the method
REPRO_TRIES = 12  # failing repros before check_repro stops judging (an experiment is free)
REDRAWS = 4  # draws a seed may take to find a case whose run shows a symptom (rarely > 1)
EXERCISES = journal.CASE_CHECKS  # the journal's names for the three checks


@dataclass(frozen=True)
class Measured:
    """A case's scenario trained on its device and on the CPU, and what a user would notice."""

    spec: CaseSpec
    buggy: ScenarioReport
    healthy: ScenarioReport
    findings: tuple[Finding, ...]


def _measure(spec: CaseSpec) -> Measured:
    with emps.use_backend(planted_backend(spec.bug)):
        buggy = run(spec.scenario)
    healthy = run(spec.scenario, "cpu")
    return Measured(spec, buggy, healthy, tuple(observe(buggy, healthy)))


@functools.lru_cache(maxsize=64)
def measured(seed: int) -> Measured:
    """The case a seed opens, trained and observed: the first draw whose run shows a symptom."""
    for attempt in range(REDRAWS):
        found = _measure(generate(seed, attempt))
        if found.findings:
            return found
    raise CourseError(f"seed {seed} drew no case that shows a symptom; try another seed")


def open_case(seed: int | None = None) -> Case:
    """Open the case a seed generates (a random seed if none). Takes a few seconds: it trains."""
    if seed is None:
        seed = secrets.randbelow(1_000_000)
    return Case(measured(require_seed(seed)))


@dataclass
class _Progress:
    """Where a learner stands on one seed's case (kept for the session, whatever object).

    A passing repro and the wrong culprits are read back from the journal, where every check
    is saved with the case's seed: a restarted kernel neither forgets the repro nor hands out
    new tries."""

    repro_passed: bool = False
    wrong_culprits: int = 0
    culprit_passed: bool = False
    wrong_repros: int = 0
    hints: int = 0

    @classmethod
    def of(cls, seed: int) -> _Progress:
        repro, culprit = (journal.case_checks(name, seed) for name in EXERCISES[:2])
        return cls(
            repro_passed=any(e.passed for e in repro),
            wrong_culprits=sum(not e.passed for e in culprit),
            culprit_passed=any(e.passed for e in culprit),
            wrong_repros=sum(not e.passed for e in repro),
        )


_PROGRESS: dict[int, _Progress] = {}
_OPENED: list[Case] = []  # the case hint() talks about: the one opened last


def opened() -> Case | None:
    """The case opened last in this session, if any (hint() and the checklist ask)."""
    return _OPENED[-1] if _OPENED else None


def hint() -> Text:
    """The next hint for the case opened last (a line that runs in any cell)."""
    case = opened()
    if case is None:
        raise CourseError("open a case first: case = open_case(seed)")
    return case.hint()


PAIRS_NOTE = (
    "A kernel may break only where two of these meet (a call that has both properties at once):\n"
    "then name both, e.g. check_culprit(op, ('transposed', 'repeat-call'))."
)
HINT_LINE = "stuck? run:  from course.mystery import hint; hint()"


class _ScenarioInRepro(Exception):
    """A repro trained the scenario: it shows the symptom, not the bug."""


@dataclass(frozen=True)
class Answer:
    """The solution of a case, for instructors."""

    spec: CaseSpec

    def __str__(self) -> str:
        bug = self.spec.bug
        effect = EFFECTS[bug.effect].__doc__.splitlines()[0]
        return "\n".join(
            [
                f"culprit: {bug.op} on {bug.trigger.describe(bug.op)} "
                f"(condition {' + '.join(bug.trigger.kinds)!r}; band {self.spec.band!r})",
                f"what the kernel does: {effect}",
                f"modelled on: {pattern(bug.trigger)}",
                f"where it strikes: {self.spec.design.hit} (the user's habit: "
                f"{self.spec.site.habit})",
                *self._decoy(),
                "",
                "reference repro:",
                self.spec.repro,
                "",
                "reference fix:",
                self.spec.fix,
            ]
        )

    def _decoy(self) -> list[str]:
        """The decoy symptom's line, if the case has one (families' Note [Decoy symptoms])."""
        oddity = self.spec.design.oddity
        if oddity is None:
            return []
        return [
            f"decoy: {oddity.parameter} never changes because the user froze it "
            "(requires_grad_(False)); the CPU run shows the same"
        ]

    __repr__ = __str__


class Case:
    """One mystery: a brief, a device with one planted bug, the user's code, three checkers."""

    device = emps.DEVICE

    def __init__(self, found: Measured) -> None:
        self._found = found
        self._spec = found.spec
        self.seed = found.spec.seed
        self.backend = planted_backend(self._spec.bug)  # your experiments' device: it remembers
        self._judging = False  # True while check_repro runs the learner's function
        self._ran_model = False  # the repro judged last built or ran the user's model
        if self.seed not in _PROGRESS:
            _PROGRESS[self.seed] = _Progress.of(self.seed)
        self._progress = _PROGRESS[self.seed]
        _OPENED[:] = [self]

    # --- what the learner reads ------------------------------------------------------------

    @property
    def title(self) -> str:
        """A short title from the symptom (it names no case id and nothing of the cause)."""
        return title(list(self._found.findings))

    @property
    def brief(self) -> str:
        """The bug report, as the user would write it."""
        return brief(self._spec.design.description, list(self._found.findings))

    def describe(self) -> Text:
        """Title, seed and the user's report, wrapped to fit a notebook cell."""
        paragraphs = [
            self.brief,
            "The user's code: case.source(). Its training run: case.run_scenario() "
            '(and case.run_scenario(device="cpu")).',
        ]
        wrapped = "\n\n".join(textwrap.fill(text, 96) for text in paragraphs)
        return Text(f"{self.title}   ({self._drawn})\n\n{wrapped}")

    @property
    def _drawn(self) -> str:
        """'seed N', and which draw when the first one showed no symptom: the instructor's key
        lists a seed's later draws under that name."""
        attempt = self._spec.attempt
        return f"seed {self.seed}" + (f", draw {attempt + 1}" if attempt else "")

    def source(self) -> Text:
        """The user's code: the model class, its recipe, the helpers it uses, build and data."""
        return Text(user_code(self._spec.design))

    @staticmethod
    def conditions() -> Text:
        """The conditions check_culprit accepts, each with what it means."""
        rows = [f"{name:<20} {text}" for name, text in CONDITIONS.items()]
        return Text("\n".join([*rows, "", PAIRS_NOTE]))

    def hint(self, step: int | None = None) -> Text:
        """The next step of the method (or a given step, 1-based)."""
        if step is None:
            self._progress.hints = min(self._progress.hints + 1, len(hints.STEPS))
            step = self._progress.hints
        journal.record(self._current_exercise(), "hint")
        return Text(hints.hint_text(step))

    # --- the device and the scenario -------------------------------------------------------

    @contextlib.contextmanager
    def use_device(self) -> Iterator[str]:
        """Run a block on the case's device; inside a checker, on the device under test."""
        if self._judging:
            yield self.device
            return
        with emps.use_backend(self.backend):
            yield self.device

    def model(self, device: str | None = None) -> nn.Module:
        """The user's model as their code builds it, on the case's device (or "cpu")."""
        device = self._device(device)
        with self.use_device():
            return self._spec.scenario.setup(device)[0]

    def optimizer(self, model: nn.Module) -> torch.optim.Optimizer:
        """The optimizer the model trains with (its own recipe)."""
        return model.configure_optimizer()

    def step(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> float:
        """One full-batch training step; returns the loss before the step."""
        self._refuse_in_repro()
        device = next(model.parameters()).device
        scenario = self._spec.scenario
        data = scenario.data()
        with self.use_device():
            optimizer.zero_grad()
            value = scenario.loss(model, data.x.to(device), data.y.to(device))
            value.backward()
            optimizer.step()
        return value.item()

    def run_scenario(
        self, patch: Patch | None = None, device: str | None = None, quiet: bool = False
    ) -> ScenarioReport:
        """Train the user's scenario (on the case's device, or device="cpu"), optionally patched."""
        self._refuse_in_repro()
        device = self._device(device)
        steps = self._spec.scenario.steps

        def progress(step: int, total: int, note: str) -> None:
            if step % max(1, steps // 4) == 0 or step == total:
                print(f"  step {step:>3}/{total}  {note}", flush=True)

        if not quiet:
            print(f"training on {device}:")
        with self.use_device():
            return run(self._spec.scenario, device, patch, None if quiet else progress)

    def _device(self, device: str | None) -> str:
        if device in (None, "emps", self.device):
            return self.device
        require_choice("device", device, (self.device, "cpu"))
        return device

    def _refuse_in_repro(self) -> None:
        if self._judging:
            self._ran_model = True
            raise _ScenarioInRepro

    def _current_exercise(self) -> str:
        if not self._progress.repro_passed:
            return EXERCISES[0]
        return EXERCISES[1]

    # --- the checkers ----------------------------------------------------------------------

    def _recorded(self, name: str, verdict: Verdict) -> Verdict:
        """Save the check in the journal; a failure carries the hint line until hints are seen."""
        journal.record(name, "check", passed=verdict.passed, case=self.seed)
        if not verdict.passed and not self._progress.hints:
            verdict.message += f"\n  {HINT_LINE}"
        return verdict

    def check_repro(self, repro: Callable[[], object]) -> Verdict:
        """Judge a minimal reproduction: True on this bug, False on no bug and on other bugs."""
        blank = _blank(repro)
        if blank is not None:
            return blank
        if not callable(repro):
            return failed(
                "pass your function itself: case.check_repro(repro), without calling it",
                type(repro).__name__,
                "a function",
            )
        progress = self._progress
        journaled = _Progress.of(self.seed)
        progress.wrong_repros = max(progress.wrong_repros, journaled.wrong_repros)
        if not (progress.repro_passed or journaled.repro_passed) and (
            progress.wrong_repros >= REPRO_TRIES
        ):
            return failed(
                f"{REPRO_TRIES} repros did not isolate the bug, so this check stops judging: "
                "trying repros is not the method. Experiment on case.device yourself (one op, "
                "one property, compared with the CPU exactly) until one op and one condition "
                "explain the symptom; your instructor can reset this case's checks."
            )
        verdict = _judge_repro(self, repro)
        if verdict.message.startswith(NOT_ATTEMPTED):
            return verdict
        progress.repro_passed |= verdict.passed
        progress.wrong_repros += not verdict.passed
        return self._recorded(EXERCISES[0], verdict)

    def _on(self, backend: emps.Backend, repro: Callable[[], object]) -> object:
        """Call a repro on a backend. Its random numbers come from the learner's own stream,
        untouched by the check, so each of the runs sees fresh ones. While it runs,
        `case.backend` is that backend too, so a repro that passes it on (to the auditor, to
        `emps.use_backend`) runs on the device under test, as `case.use_device()` does. A
        forward of the user's model or an optimizer step is refused, and noted (`_ran_model`)
        even where the repro catches the refusal: either runs many kernels, and where no
        other op meets the condition the decoy device cannot tell them from the one op."""
        hooks = (
            torch.nn.modules.module.register_module_forward_pre_hook(self._no_model),
            register_optimizer_step_pre_hook(self._no_step),
        )
        own = self.backend
        with emps.use_backend(backend):
            self._judging, self._ran_model, self.backend = True, False, backend
            try:
                return repro()
            finally:
                self._judging, self.backend = False, own
                for hook in hooks:
                    hook.remove()

    def _no_model(self, module: nn.Module, args: tuple) -> None:
        if isinstance(module, models.Trainable):
            self._refuse_in_repro()

    def _no_step(self, optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict) -> None:
        self._refuse_in_repro()

    def check_culprit(self, op: str, condition: str | tuple[str, str]) -> Verdict:
        """Judge the culprit: an in-place op (see OPS) and a condition (case.conditions()), or
        the two conditions a call must meet at once, e.g. ("transposed", "repeat-call")."""
        if op is Ellipsis or condition is Ellipsis or op is None or condition is None:
            return failed(
                f"{NOT_ATTEMPTED}: replace the `...` with your answer, then run the cell."
            )
        progress = self._progress
        # the journal's count too: a counter reset in this session does not hand out new tries
        journaled = _Progress.of(self.seed).wrong_culprits
        progress.wrong_culprits = max(progress.wrong_culprits, journaled)
        if not progress.repro_passed:
            return failed(
                "first show the bug: case.check_repro(repro) must pass. The culprit is the op "
                "and the condition your passing repro isolates."
            )
        if progress.wrong_culprits >= TRIES:
            return self._recorded(
                EXERCISES[1],
                failed(
                    f"{TRIES} answers were not the planted bug, so this check stops answering: "
                    "guessing is not the method. Your passing repro calls one op on a tensor "
                    "with one property; vary that property alone (keep the op), then the op "
                    "alone (keep the property), and name what your experiments show."
                ),
            )
        try:
            name, chosen = op_name(op), condition_named(condition)
        except NotAnAnswer as exc:
            return failed(str(exc))
        bug = self._spec.bug
        yours = f"{name} on {' and '.join(sorted(chosen))}"
        if name == bug.op and chosen == bug.trigger.answer:
            progress.culprit_passed = True
            return self._recorded(EXERCISES[1], passed(f"{yours}: that is the planted bug"))
        progress.wrong_culprits += 1
        left = TRIES - progress.wrong_culprits
        return self._recorded(
            EXERCISES[1],
            failed(
                f"{yours} is not the planted bug ({left} {'try' if left == 1 else 'tries'} "
                "left). Name the one op and the condition your repro needs (both, where it "
                "needs two properties at once): change any of them and it should stay quiet."
            ),
        )

    def check_fix(self, patch: Patch) -> Verdict:
        """Judge a fix: patch(model) -> model must train healthily on the buggy device, with
        the trigger gone, changing the model's code only (never torch or the device) and not
        what the model computes."""
        blank = _blank(patch)
        if blank is not None:
            return blank
        if not callable(patch):
            return failed(
                "pass your function itself, without calling it: case.check_fix(patch), where "
                "patch(model) returns the fixed model",
                type(patch).__name__,
                "a function",
            )
        if not _culprit_named(self.seed):
            return failed(
                "first name the culprit: case.check_culprit(op, condition) must pass (after a "
                "passing repro). A fix removes the trigger your culprit names; a patch tried "
                "before that is a guess the check would confirm."
            )
        verdict = _judge_fix(self, patch)
        if verdict.message.startswith(NOT_ATTEMPTED):
            return verdict
        return self._recorded(EXERCISES[2], verdict)

    # --- for instructors -------------------------------------------------------------------

    def answer(self) -> Answer:
        """The culprit, its condition, the reference repro and fix: for instructors, in
        instructor mode on an instructor's install (see `instructor_install`)."""
        if not instructor_install():
            raise CourseError(
                "answer() needs the instructor's install: this one holds no reference notebooks "
                "(a student release). An instructor sets COURSE_SOLUTIONS to a folder of the "
                "reference notebooks, or reads the key that `python -m course mystery --deal N "
                f"--key FILE` wrote. {HINT_LINE.capitalize()}: the next step of the method."
            )
        if not INSTRUCTOR_STATE["on"]:
            raise CourseError(
                "answer() is for instructors: call course.exercises.instructor_mode(True) or "
                f"set COURSE_INSTRUCTOR=1 first. {HINT_LINE.capitalize()}: the next step of the "
                "method."
            )
        return Answer(self._spec)

    def __repr__(self) -> str:
        return f"<mystery case, seed {self.seed}: {self.title!r}; print(case.describe())>"


# --- judging (module functions: the Case methods above stay short) ----------------------------


def user_code(design: Design) -> str:
    """What case.source() shows: the model class, its recipe, the helpers the build uses, and
    the build and data code itself."""
    constructor = design.constructor.split("(")[0]
    used = [models.Trainable, USER_NAMES[constructor]]
    used += [f for name, f in USER_NAMES.items() if f"{name}(" in "".join(design.habit_lines)]
    if constructor == "Attention":
        used.append(models.split_heads)
    parts = [_source(obj) for obj in used] + [design.source()]
    return "\n\n".join(parts)


@functools.cache
def _source(obj: object) -> str:
    """The course's own source of a class or function: read once per process, since
    inspect.getsource parses the whole module again on every call (about 25 ms on Python 3.11)."""
    return inspect.getsource(obj)


def instructor_install() -> bool:
    """Whether this install holds notebook 10's reference (course.exercises.solutions decides
    where: `COURSE_SOLUTIONS`, else the checkout's notebooks/). Why: instructor mode is one call
    away for anyone, so on its own it only prevents a spoiler by accident; a student release
    holds no reference notebook, so there the answer stays with the instructor, like every
    exercise's solution."""
    folder = solutions.notebook_dir()
    return folder is not None and (folder / lesson_of(EXERCISES[0]).filename).is_file()


def _culprit_named(seed: int) -> bool:
    """Whether a culprit check passed for this seed (the journal's word, so neither a restart
    nor an edit of the session's progress changes it)."""
    return any(e.passed for e in journal.case_checks(EXERCISES[1], seed))


def _blank(answer: object) -> Verdict | None:
    """ "Not attempted yet" for a learner copy's untouched `...` (or None)."""
    if answer is Ellipsis or answer is None:
        return failed(f"{NOT_ATTEMPTED}: replace the `...` with your answer, then run the cell.")
    return None


def _scaffold(exc: BaseException) -> Verdict | None:
    if is_scaffold(exc):
        return failed(f"{NOT_ATTEMPTED}: your function still raises NotImplementedError.")
    return None


def _as_bool(value: object) -> bool | None:
    """A repro's answer as a bool (a 1-element bool tensor or a NumPy bool counts: what
    `.any()` returns on a tensor or on an array), or None if it is not one."""
    if isinstance(value, (bool, numpy.bool_)):
        return bool(value)
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.dtype == torch.bool:
        return bool(value.item())
    return None


_CONTROL = "on a control device"


def _repro_runs(case: Case) -> list[tuple[str, emps.Backend, bool, str]]:
    """The devices a repro runs on: the case's (True), the bug removed (False), then the
    controls (False), each named alike: the decoy (every other suspect op broken under the same
    condition) and the siblings (this op broken under other conditions). A message naming
    which control said True would confirm half of the answer (the op, or the condition)."""
    spec = case._spec
    controls = [spec.decoy, *spec.siblings]
    return [
        (
            "on the case's device",
            planted_backend(spec.bug),
            True,
            "it does not show the bug. Run the suspect op on a tensor with the property you "
            "suspect, on case.device, and compare with the CPU exactly.",
        ),
        (
            "on the same device with the bug removed",
            harmless_backend(spec.bug),
            False,
            "it cannot tell this bug from no bug at all (a repro that always says True, "
            "compares with a reference that is itself off, or reads the device or the case "
            "instead of a result does that). Compare with the same call on the CPU: the op's "
            "formula written out by hand can round differently.",
        ),
        *(
            (
                _CONTROL,
                planted_backend(control),
                False,
                f"{len(controls)} control devices each break something else: other ops under "
                "some condition, or ops under other conditions; which one said True is not "
                "told, since that would give half the answer away. A minimal repro calls one "
                "op, on inputs made on the CPU and moved with .to(case.device), and gives them "
                "the one property you suspect and nothing else unusual (sizes, dtype, operands, "
                "scalars, calls).",
            )
            for control in controls
        ),
    ]


_TRAINS = (
    "your repro runs the user's model, steps an optimizer or trains the scenario: that shows "
    "the symptom, not the bug, and on the other devices it cannot tell this op from the rest. "
    "A minimal repro calls one op on one tensor, on the device and on the CPU."
)
_NOT_STRUCK = (
    "on the case's device your repro returned True, but the planted bug never struck while it "
    "ran: its True does not come from a result the device got wrong (it reads something else: "
    "the device object, the case, a counter). Compare the op's result on case.device with the "
    "CPU's, exactly."
)


def _raised(exc: Exception) -> str:
    """What a repro's exception means. An assertion (assert, torch.testing.assert_close) is
    how tests report a difference; a repro reports it by what it returns."""
    said = f"your repro raised {type(exc).__name__}: {exc}".rstrip(": ")
    if isinstance(exc, AssertionError):
        said += (
            ". A repro returns its answer instead of asserting it: True where the device "
            "differs from the CPU, False where they agree (catch the AssertionError to "
            "return True)"
        )
    return said


def _judge_repro(case: Case, repro: Callable[[], object]) -> Verdict:
    struck = 0  # how often the planted bug struck in the run that must say True
    for where, backend, expected, why in _repro_runs(case):
        try:
            answer = case._on(backend, repro)
        except _ScenarioInRepro:
            return failed(_TRAINS)
        except Exception as exc:
            return _scaffold(exc) or failed(f"{where} {_raised(exc)}")
        value = _as_bool(answer)
        if case._ran_model:
            return failed(_TRAINS)
        if value is None:
            return failed(
                f"{where} your repro returned {answer!r}: return True or False",
                type(answer).__name__,
                "bool",
            )
        if expected:
            struck = times_fired(backend)
        if value != expected:
            return failed(
                f"{where} your repro returned {value}: {why}",
                value,
                expected,
            )
    if not struck:
        return failed(_NOT_STRUCK, "True, the bug never struck", "True, from the bug")
    return passed(
        "a minimal reproduction: True on this bug; False with no bug, with the other ops broken "
        "the same way, and with this op broken under other conditions"
    )


def _judge_fix(case: Case, patch: Patch) -> Verdict:
    """Train with the patch; check that the patched model computes what the user's does; where
    the habit's trigger is in the model (not in its recipe), train it again with the user's own
    recipe (see fixes.RECIPE_HABITS)."""
    record = guard.pristine()
    before = record.changes()
    if before:
        record.restore(modes=False)
        return _device_patch(before, "before the check")
    verdict = _trained_with(case, patch, record)
    if not verdict.passed:
        return verdict
    changed = _what_it_computes(case, patch, record)
    if changed is not None or case._spec.design.habit in RECIPE_HABITS:
        return changed or verdict
    variant = _trained_with(case, _users_recipe(patch), record)
    if variant.passed or variant.message.startswith(_DEVICE_PATCH):
        return variant
    why = variant.message.splitlines()[0]
    return failed(
        "your patch trains well with the recipe it sets, but on a hidden variant, the same "
        "patched model trained with the user's own recipe (their optimizer and its options), "
        f"it does not: {why}. Changing the optimizer or its "
        "options only routes training around the kernel; what trips it is still in the model, "
        "for the next call that meets it. Change where that comes from in the user's code.",
        variant.yours,
        variant.expected,
    )


SAME_FUNCTION = 1e-4  # relative difference of outputs: float32 rounding, not another model


def _what_it_computes(case: Case, patch: Patch, record: guard.Pristine) -> Verdict | None:
    """None if the patched model computes what the user's does, else why not.

    Why: a patch that drops a step (the mask, the clip, the bias that meets the bug) trains
    healthily and never meets the condition, but it fixes a different model. The user's model
    runs on the device without its bug, the patched one on the case's device (so a patch that
    asks which device it is on gains nothing), both in float32 (a bfloat16 model's values are
    exact there), on the training inputs and on inputs ten times as large (where a clip or a
    cap acts)."""
    scenario = case._spec.scenario
    try:
        user = _outputs(scenario, bug_free_backend())
        mine = _outputs(scenario, planted_backend(case._spec.bug), patch)
    except _Unsealed as exc:
        record.restore()
        return _device_patch(exc.args[0], "while your patched model ran")
    except Exception as exc:
        return _put_back(record) or failed(
            f"your patch, on a freshly built model, raised {type(exc).__name__}: {exc}"
        )
    refused = _put_back(record)
    if refused is not None:
        return refused
    worst = max(((a - b).norm() / b.norm()).item() for a, b in zip(mine, user, strict=True))
    if worst <= SAME_FUNCTION:
        return None
    return failed(
        "your patch changes what the model computes: from the same initial weights, the "
        f"patched model's outputs differ from the user's model's by {worst:.0%} (on the "
        "training inputs, or on inputs ten times as large). Removing or changing a step of the "
        "model hides the bug by training another model. A fix keeps the model's function and "
        "changes how it stores or computes its tensors.",
        f"outputs {worst:.0%} away",
        "the same outputs, up to rounding",
    )


def _outputs(scenario: Scenario, backend: emps.Backend, patch: Patch | None = None) -> list:
    """The freshly built (and patched) model's float32 outputs on the training inputs and on
    ten times them, computed on `backend`."""
    inputs = scenario.data().x
    seal = _seal(backend) if patch is not None else contextlib.nullcontext()
    with emps.use_backend(backend), seal:
        model = scenario.setup(emps.DEVICE)[0]
        if patch is not None:
            model = apply_patch(model, patch, emps.DEVICE)
        model = model.float()
        with torch.no_grad():
            outputs = [model(x.to(emps.DEVICE)).float().cpu() for x in (inputs, 10 * inputs)]
    if patch is not None and seal.broken:
        raise _Unsealed(seal.broken)
    return outputs


class _Unsealed(Exception):
    """The patched model changed torch or the device while it computed its outputs."""


def _put_back(record: guard.Pristine) -> Verdict | None:
    """Undo what a patch changed in torch or the device; the refusal if it changed anything."""
    changed = record.changes()
    record.restore()
    return _device_patch(changed, "while your patch ran") if changed else None


def _users_recipe(patch: Patch) -> Patch:
    """The patch, then the model's recipe and configure_optimizer put back as the user had them."""

    def patched(model: nn.Module) -> nn.Module:
        recipe = {name: getattr(model, name) for name in RECIPE}
        model = patch(model)
        for name, value in recipe.items():
            setattr(model, name, value)
        model.configure_optimizer = types.MethodType(models.Trainable.configure_optimizer, model)
        return model

    return patched


def _seal(backend: emps.Backend, detours: Detours | None = None) -> guard.Seal:
    """A seal for a run on `backend` (a planted one), wired into its kernel and the detour
    watch, so that every op on the device checks the backend (see guard.Seal)."""
    seal = guard.Seal(backend, own_modes=(Detours,))
    backend.overrides.kernel.watch = seal.check_backend
    if detours is not None:
        detours.watch = seal.check_backend
    return seal


def _trained_with(case: Case, patch: Patch, record: guard.Pristine) -> Verdict:
    """One training run on a fresh planted device, sealed (guard.Seal): refused if it changed
    torch or the device, even for a moment inside forward, a hook or the optimizer (put back),
    or left the device; else judged against the CPU run."""
    backend = planted_backend(case._spec.bug)
    detours = Detours()
    seal = _seal(backend, detours)
    device = _device_state(backend)
    try:
        with emps.use_backend(backend), seal:
            report = run(case._spec.scenario, emps.DEVICE, patch, during_steps=detours)
            swapped = emps.current_backend() is not backend
    except CourseError as exc:
        changed = record.changes() + _tampered(device) + seal.broken
        record.restore()
        return _device_patch(changed, "while your patch ran") if changed else failed(str(exc))
    except Exception as exc:
        changed = record.changes() + _tampered(device) + seal.broken
        record.restore()
        if changed:
            return _device_patch(changed, "while your patch ran")
        return _scaffold(exc) or failed(
            f"training with your patch raised {type(exc).__name__}: {exc}"
        )
    changed = record.changes() + _tampered(device) + seal.broken
    changed += ["the case's backend was swapped for another"] if swapped else []
    record.restore()
    if changed:
        return _device_patch(changed, "while your patch ran")
    if detours.found:
        return _detour(detours.found)
    return judge_fix(report, case._found.healthy, times_fired(backend))


def _device_state(backend: emps.Backend) -> list[tuple[object, type, dict]]:
    """The planted device's objects as the check made them: each with its class and fields."""
    overrides = backend.overrides
    return [(o, type(o), dict(vars(o))) for o in (backend, overrides, overrides.kernel)]


def _tampered(state: list[tuple[object, type, dict]]) -> list[str]:
    """What a patch changed on the device's own objects (a bug list emptied, a kernel swapped).

    Why: the guard watches modules and classes; these are instances, which a patch reaches
    through emps.current_backend(). The device is the check's own, made for this run alone,
    so nothing needs putting back."""
    found = [
        f"the device's {kind.__name__} became a {type(o).__name__}"
        for o, kind, _ in state
        if type(o) is not kind
    ]
    for o, _, fields in state:
        now = vars(o)
        found += [
            f"the device's {type(o).__name__}.{key} was changed"
            for key in sorted(fields.keys() | now.keys())
            if now.get(key, _GONE) is not fields.get(key, _GONE)
        ]
    return found


_GONE = object()


def _detour(found: list[Detour]) -> Verdict:
    return failed(
        f"your fix takes the compute off the device: during training, {len(found)} times, work "
        f"left it for the CPU (first: {found[0]}, inside forward, backward or the optimizer "
        "step). The planted kernel then never runs, and neither would the real device's "
        "kernel under test: the bug is only moved to the CPU, with copies each way every "
        "step. A fix keeps computing on the device; change how the model stores or computes "
        "its tensors.",
        f"{len(found)} detours through the CPU",
        "none: every op on the device",
    )


_DEVICE_PATCH = "a fix changes the user's model, not torch or the device"


_USER_CODE = f"{models.__name__}."  # the user's classes and helpers (case.source())


def _device_patch(changes: list[str], when: str) -> Verdict:
    """The refusal of a patch that changed modules or classes. Where it changed only the
    user's own code (a class's method, a helper like split_heads), the fix may well be right
    but sits in the wrong place: it would change every model, the CPU run it is compared with
    included, and outlive the check; so the message says where to put it instead."""
    listed = "; ".join(changes[:4]) + ("; ..." if len(changes) > 4 else "")
    if all(change.startswith(_USER_CODE) for change in changes):
        where = (
            "That is the user's code for every model, the CPU run it is compared with "
            "included, not the model your patch receives: make the same change on that model "
            "(model.<method> = ..., a submodule of its own, a forward of its own)."
        )
    else:
        where = (
            "Change how the model stores or computes its tensors (its init, a view, a memory "
            "format, an op done in place, the optimizer's options)."
        )
    return failed(
        f"{_DEVICE_PATCH}. {when.capitalize()}: "
        f"{listed}. The check put everything back, so no later experiment inherits it. {where}"
    )
