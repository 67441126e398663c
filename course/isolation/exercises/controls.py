"""The control runs, and the 02.two_variables and 02.contiguous predictions.

The runs the text builds on (float64 and float32 on the CPU, a contiguous encoder) are checked
as benches, after the learner ran the experiment on them: only the variable under test may
differ from the story's bench, and Adam must have stepped it with the bench active.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from course import emps
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    passed,
    register,
    register_prediction,
)
from course.isolation import experiments
from course.isolation.exercises.common import (
    STORY_ADAM,
    STORY_BETAS,
    bench_label,
    stepped_outside,
    wrong_setting,
)
from course.isolation.exercises.moves import moved
from course.isolation.experiments import ENCODER, Bench, bench

# ---- 02.two_variables (a prediction) ---------------------------------------------------------

TWO_VARIABLES = ("only the dtype", "the dtype and the device", "the dtype and Adam's settings")


def float64_run_changes() -> str:
    """Ask the device for float64: where it refuses, a float64 run can only be a CPU run."""
    try:
        torch.zeros(1, dtype=torch.float64, device=emps.DEVICE)
    except TypeError:
        return TWO_VARIABLES[1]
    return TWO_VARIABLES[0]


register_prediction(
    Prediction(
        "02.two_variables",
        "The story's float64 run trained. Compared with the story's run (float32 on the "
        "device, Adam with its usual settings), what differs in a float64 run?",
        TWO_VARIABLES,
        float64_run_changes,
        "The device refuses float64, so a float64 run can only run on the CPU: the dtype AND the "
        "device changed at once, and either one could be why it trains. Adam's settings are the "
        "story's in both runs. The next run changes one of the two alone.",
        answer_words=("two variables",),
    )
)

# ---- 02.float64_run, 02.float32_run, 02.contiguous_run ---------------------------------------


@dataclass(frozen=True)
class Control:
    """A run the text builds on: the story's bench with only `changed` different, Adam-stepped."""

    what: str
    changed: str
    device: str = "emps"
    dtype: torch.dtype = torch.float32
    contiguous: bool = False  # whether the encoder is stored contiguously


STORY_BATCH, STORY_SEED, STORY_K = 128, 0, 32


@functools.cache
def _story_initial() -> dict[str, torch.Tensor]:
    return bench().initial


def _setting(b: Bench, control: Control) -> Verdict | None:
    """The device, dtype and profile: what the run changes, and nothing else."""
    where, dtype = b.model_device.type, next(b.model.parameters()).dtype
    one = f"the one change here is {control.changed}"
    if where != control.device:
        later = b.profile != emps.DEFAULT_PROFILE
        return failed(
            f"{control.what} runs on {control.device}, and your bench's parameters live on "
            f"{where}: {one}"
            + (" (another profile is still the emulated device)" if later else ""),
            where,
            control.device,
        )
    if dtype != control.dtype:
        message = f"{control.what} is {control.dtype}, and your bench is {dtype}: {one}"
        return failed(message, dtype, control.dtype)
    if where == "emps" and b.profile != emps.DEFAULT_PROFILE:
        return failed(
            f"your bench also changed the profile ({bench_label(b)}): a second variable. "
            f"The one change here is {control.changed}",
            b.profile,
            emps.DEFAULT_PROFILE,
        )
    return None


def _start(b: Bench, control: Control) -> Verdict | None:
    """The same model, the same weights and the same batches as the story's bench."""
    story = _story_initial()
    if b.seed != STORY_SEED or b.batch_size != STORY_BATCH:
        return failed(
            f"your bench has seed {b.seed} and batch size {b.batch_size}: other weights or "
            "other batches, a second variable. Keep the story's.",
            (b.seed, b.batch_size),
            (STORY_SEED, STORY_BATCH),
        )
    shapes = {n: list(t.shape) for n, t in b.initial.items()}
    if shapes != {n: list(t.shape) for n, t in story.items()}:
        return failed(
            "your bench's model has other sizes than the story's: another model, a second variable",
            shapes[ENCODER],
            list(story[ENCODER].shape),
        )
    if b.model.k != STORY_K:
        return failed(
            f"your bench keeps k = {b.model.k} features per sample, the story's {STORY_K}: "
            "another model, a second variable",
            b.model.k,
            STORY_K,
        )
    if any(not torch.equal(b.initial[n].double(), story[n].double()) for n in story):
        return failed(
            "your bench started from other weights than the story's: a second variable. The "
            "runs must start from the same values."
        )
    return None


def _layout(b: Bench, control: Control) -> Verdict | None:
    """The encoder's layout is the one under test; every other parameter stays contiguous."""
    others = [n for n, p in b.model.named_parameters() if n != ENCODER and not p.is_contiguous()]
    too = f"a second variable. The one change here is {control.changed}"
    if others:
        return failed(
            f"your bench's {others[0]} is not contiguous, the story's is: you changed its "
            f"layout too, {too}"
        )
    weight = b.parameter(ENCODER)
    if weight.is_contiguous() == control.contiguous:
        return None
    if control.contiguous:
        return failed(
            f"your bench's encoder is still stored transposed (stride {weight.stride()}): the "
            f"one change of {control.what} is a contiguous encoder, e.g. "
            "experiments.bench(init='contiguous')"
        )
    return failed(f"your bench's encoder is contiguous: you changed its layout too, {too}")


def _ran_adam(b: Bench, control: Control) -> Verdict | None:
    if verdict := stepped_outside(b, control.what):
        return verdict
    if not b.steps:
        return failed(
            "no step has run on this bench yet: run your experiment on it "
            "(encoder_moves(your_bench, experiments.adam())), then check the bench"
        )
    others = sorted({r.update for r in b.steps if r.update != "Adam"})
    if others:
        return failed(
            f"your run stepped {', '.join(others)}: the run that froze was Adam's, so its "
            "controls step Adam too"
        )
    settings = {(r.lr, r.betas) for r in b.steps}
    if settings != {(1e-3, STORY_BETAS)}:
        return failed(
            f"your Adam ran with (lr, betas) {sorted(settings)[0]}: a second variable. Keep the "
            "story's: experiments.adam() (lr 1e-3, betas (0.9, 0.999))"
        )
    return wrong_setting(b, STORY_ADAM, control.what, "the story's Adam, experiments.adam(),")


def _changed_after(b: Bench, control: Control) -> Verdict | None:
    """A step that ran before the change under test: the run measured the story's setting.

    The log keeps each parameter as it was at every step, so a bench changed after its run
    (moved to the CPU, made float64 or contiguous) is told so, not taken for a controlled run."""
    for record in b.steps:
        for name, device, dtype, contiguous in record.setup:
            want = (control.device, control.dtype, control.contiguous if name == ENCODER else True)
            if (device, dtype, contiguous) == want:
                continue
            was = (
                f"on {device}"
                if device != control.device
                else str(dtype)
                if dtype != control.dtype
                else "contiguous"
                if contiguous
                else "not contiguous (stored transposed)"
            )
            return failed(
                f"your {record.update} step ran while the bench's {name} was {was}: "
                f"{control.changed} changed only after the run, so the run measured the "
                "story's setting. Make the change first (build the bench that way), then run "
                "encoder_moves(your_bench, experiments.adam()) on it."
            )
    return None


def _had_gradients(b: Bench, control: Control) -> Verdict | None:
    """Adam stepped, yet the encoder is as built: the step had no gradient to apply.

    On every bench these runs are made on (the CPU, a contiguous encoder) Adam moves the
    encoder, so an unmoved one says the experiment did not run as it must, not what the
    device does."""
    if not torch.equal(b.initial[ENCODER].double(), b.snapshot()[ENCODER].double()):
        return None
    grad = b.parameter(ENCODER).grad
    cause = (
        "it has no gradient (no backward ran, or the gradients were cleared before the step)"
        if grad is None
        else "its gradient is zero (cleared after the backward?)"
        if not grad.any()
        else "the step ran before the backward"
    )
    return failed(
        f"Adam stepped your bench, and its encoder is exactly as built: {cause}. A step with "
        f"no gradient moves nothing, so this run says nothing about {control.changed}. "
        "Run encoder_moves(your_bench, experiments.adam()) on a fresh bench: backward, then step."
    )


def _check_control(control: Control, answer: object) -> Verdict:
    if not isinstance(answer, Bench):
        message = f"give the bench you ran {control.what} on (the object experiments.bench(...) "
        return failed(message + "returned)", type(answer).__name__, "Bench")
    for part in (_setting, _start, _layout, _ran_adam, _changed_after, _had_gradients):
        verdict = part(answer, control)
        if verdict is not None:
            return verdict
    still = torch.equal(answer.initial[ENCODER].double(), answer.snapshot()[ENCODER].double())
    return passed(
        f"a controlled run: the story's bench with only {control.changed} changed, and Adam "
        f"stepped it with the bench active (its encoder {'did not move' if still else 'moved'})."
    )


def _register(name: str, control: Control, minutes: int, prompt: str) -> None:
    register(
        Exercise(
            name=name,
            prompt=prompt,
            checker=functools.partial(_check_control, control),
            hint=f"Change {control.changed} and nothing else: every other argument of "
            "experiments.bench keeps its default. Then run encoder_moves(bench, "
            "experiments.adam()) on it, and check that bench.",
            minutes=minutes,
        )
    )


_register(
    "02.float64_run",
    Control("the float64 run", "the dtype and the device", "cpu", torch.float64),
    4,
    "Build the float64 run's bench (the device refuses float64: where can it run?), otherwise "
    "the story's, and run encoder_moves on it with experiments.adam().",
)
_register(
    "02.float32_run",
    Control("the float32 run on the CPU", "the device", "cpu"),
    3,
    "Build the float32 run on the CPU: the story's bench with only the device changed, and run "
    "encoder_moves on it with experiments.adam().",
)
_register(
    "02.contiguous_run",
    Control("the contiguous run", "the encoder's layout", contiguous=True),
    3,
    "Build the contiguous run: the story's bench with only the encoder stored contiguously, and "
    "run encoder_moves on it with experiments.adam().",
)


# ---- 02.contiguous (a prediction) -----------------------------------------------------------


def contiguous_moves() -> str:
    return "yes" if moved(bench(init="contiguous"), experiments.adam()) else "no"


register_prediction(
    Prediction(
        "02.contiguous",
        "Same values, same device, same profile: if encoder.weight were contiguous, would one "
        "Adam step move it?",
        ("yes", "no"),
        contiguous_moves,
        "Yes: with the stride the only difference, Adam moves a contiguous encoder on the same "
        "emulated device. Something on this profile mishandles a non-contiguous tensor.",
    )
)
