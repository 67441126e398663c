"""The control runs, 02.differences, and the 02.two_variables and 02.contiguous predictions.

The runs the text builds on (float64 and float32 on the CPU, a contiguous encoder) are checked
as benches, after the learner ran the experiment on them: only the variable under test may
differ from the story's bench, and Adam must have stepped it with the bench active.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
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
    LATER,
    SMALL,
    STORY_ADAM,
    STORY_BETAS,
    bench_label,
    stepped_outside,
    wrong_setting,
)
from course.isolation.exercises.stepping import reference_encoder_moves
from course.isolation.experiments import ENCODER, Bench, bench
from course.layout.named import laid_out

# ---- 02.two_variables (a prediction) ---------------------------------------------------------

TWO_VARIABLES = ("only the dtype", "the dtype and the device", "the dtype and Adam's settings")


def _float64_run_changes() -> str:
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
        _float64_run_changes,
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


FLOAT64_RUN = Control("the float64 run", "the dtype and the device", "cpu", torch.float64)
FLOAT32_RUN = Control("the float32 run on the CPU", "the device", "cpu")
CONTIGUOUS_RUN = Control("the contiguous run", "the encoder's layout", contiguous=True)
STORY_BATCH, STORY_SEED, STORY_K = 128, 0, 32


@functools.cache
def _story_initial() -> dict[str, torch.Tensor]:
    return bench().initial


def _setting(b: Bench, control: Control) -> Verdict | None:
    """The device, dtype and profile: what the run changes, and nothing else."""
    where = b.model_device.type
    dtype = next(b.model.parameters()).dtype
    if where != control.device:
        return failed(
            f"{control.what} runs on {control.device}, and your bench's parameters "
            f"live on {where}: the one change here is {control.changed}"
            + (
                " (another profile is still the emulated device)"
                if b.profile != emps.DEFAULT_PROFILE
                else ""
            ),
            where,
            control.device,
        )
    if dtype != control.dtype:
        return failed(
            f"{control.what} is {control.dtype}, and your bench is {dtype}: the one "
            f"change here is {control.changed}",
            dtype,
            control.dtype,
        )
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
            f"your bench has seed {b.seed} and batch size {b.batch_size}: other "
            "weights or other batches, a second variable. Keep the story's.",
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
            "your bench started from other weights than the story's: a second "
            "variable. The runs must start from the same values."
        )
    return None


def _layout(b: Bench, control: Control) -> Verdict | None:
    """The encoder's layout is the one under test; every other parameter stays contiguous."""
    others = [n for n, p in b.model.named_parameters() if n != ENCODER and not p.is_contiguous()]
    if others:
        return failed(
            f"your bench's {others[0]} is not contiguous, the story's is: you changed its "
            f"layout too, a second variable. The one change here is {control.changed}"
        )
    weight = b.parameter(ENCODER)
    if weight.is_contiguous() == control.contiguous:
        return None
    if control.contiguous:
        return failed(
            f"your bench's encoder is still stored transposed (stride "
            f"{weight.stride()}): the one change of {control.what} is a contiguous "
            "encoder, e.g. experiments.bench(init='contiguous')"
        )
    return failed(
        f"your bench's encoder is contiguous: you changed its layout too, a second "
        f"variable. The one change here is {control.changed}"
    )


def _ran_adam(b: Bench, control: Control) -> Verdict | None:
    verdict = stepped_outside(b, control.what)
    if verdict is not None:
        return verdict
    if not b.steps:
        return failed(
            "no step has run on this bench yet: run your experiment on it "
            "(encoder_moves(your_bench, experiments.adam())), then check the bench"
        )
    others = sorted({r.update for r in b.steps if r.update != "Adam"})
    if others:
        return failed(
            f"your run stepped {', '.join(others)}: the run that froze was Adam's, "
            "so its controls step Adam too"
        )
    settings = {(r.lr, r.betas) for r in b.steps}
    if settings != {(1e-3, STORY_BETAS)}:
        return failed(
            f"your Adam ran with (lr, betas) {sorted(settings)[0]}: a second variable. "
            "Keep the story's: experiments.adam() (lr 1e-3, betas (0.9, 0.999))"
        )
    return wrong_setting(b, STORY_ADAM, control.what, "the story's Adam, experiments.adam(),")


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


def _check_control(control: Control, answer: object) -> Verdict:
    if not isinstance(answer, Bench):
        return failed(
            f"give the bench you ran {control.what} on (the object "
            "experiments.bench(...) returned)",
            type(answer).__name__,
            "Bench",
        )
    for part in (_setting, _start, _layout, _ran_adam, _changed_after, _had_gradients):
        verdict = part(answer, control)
        if verdict is not None:
            return verdict
    moved = not torch.equal(answer.initial[ENCODER].double(), answer.snapshot()[ENCODER].double())
    return passed(
        f"a controlled run: the story's bench with only {control.changed} changed, and Adam "
        f"stepped it with the bench active (its encoder {'moved' if moved else 'did not move'})."
    )


def _run_on(update: Callable | None = None, **settings) -> Callable[[], Bench]:
    """A wrong answer: a bench built with `settings`, the experiment run on it with `update`."""

    def build() -> Bench:
        made = bench(**settings)
        if update is not None:
            reference_encoder_moves()(made, update)
        return made

    return build


def _run_with(experiment: Callable[[Bench], object], **settings) -> Callable[[], Bench]:
    """A wrong answer: a bench built with `settings`, then `experiment` run on it."""

    def build() -> Bench:
        made = bench(**settings)
        experiment(made)
        return made

    return build


def _step_without_backward(b: Bench) -> None:
    b.step(experiments.adam())


def _grads_cleared(b: Bench) -> None:
    b.backward()
    b.model.zero_grad()
    b.step(experiments.adam())


def _step_then_backward(b: Bench) -> None:
    b.step(experiments.adam())
    b.backward()


def _decoder_transposed_too(b: Bench) -> None:
    weight = b.parameter("decoder.weight")
    with b:
        weight.data = weight.data.t().contiguous().t()
    encoder_moves(b, experiments.adam())


def _run_then_double(b: Bench) -> None:
    encoder_moves(b, experiments.adam())
    b.model.double()


def _run_then_to_cpu(b: Bench) -> None:
    encoder_moves(b, experiments.adam())
    b.model.to("cpu")


def _run_then_contiguous(b: Bench) -> None:
    encoder_moves(b, experiments.adam())
    weight = b.parameter(ENCODER)
    with torch.no_grad(), b:
        weight.data = weight.data.contiguous()


# The notebook's own name for the experiment, so each reference below reads (and, printed by
# solution(...), runs) as the notebook's solution cell does.
encoder_moves = reference_encoder_moves()


def _reference_float64_run():
    cpu64 = experiments.bench(device="cpu", dtype=torch.float64)
    encoder_moves(cpu64, experiments.adam())
    return cpu64


def _reference_float32_run():
    cpu32 = experiments.bench(device="cpu")
    encoder_moves(cpu32, experiments.adam())
    return cpu32


def _reference_contiguous_run():
    contiguous = experiments.bench(init="contiguous")
    encoder_moves(contiguous, experiments.adam())
    return contiguous


def _register_control(
    name: str,
    control: Control,
    reference: Callable,
    prompt: str,
    wrong_answers: tuple[Callable, ...],
) -> None:
    register(
        Exercise(
            name=name,
            prompt=prompt,
            checker=functools.partial(_check_control, control),
            hint=f"Change {control.changed} and nothing else: every other argument of "
            "experiments.bench keeps its default. Then run encoder_moves(bench, "
            "experiments.adam()) on it, and check that bench.",
            reference=reference,
            wrong_answers=wrong_answers,
        )
    )


ADAM = experiments.adam()
F64 = {"device": "cpu", "dtype": torch.float64}
_register_control(
    "02.float64_run",
    FLOAT64_RUN,
    _reference_float64_run,
    "Build the float64 run's bench (the device refuses float64: where can it run?), otherwise "
    "the story's, and run encoder_moves on it with experiments.adam().",
    (
        _run_on(ADAM, device="cpu"),
        _run_on(ADAM),
        _run_on(ADAM, init="contiguous", **F64),
        _run_on(ADAM, seed=1, **F64),
        _run_on(ADAM, **SMALL, **F64),
        _run_on(None, **F64),
        _run_on(experiments.sgd(), **F64),
        _run_on(experiments.adam(lr=1e-2), **F64),
        lambda: True,
        _run_with(_step_without_backward, **F64),
        _run_with(_grads_cleared, **F64),
        _run_on(ADAM, k=16, **F64),
        _run_with(_run_then_double, device="cpu"),
        _run_on(experiments.adam(weight_decay=0.01), **F64),
    ),
)
_register_control(
    "02.float32_run",
    FLOAT32_RUN,
    _reference_float32_run,
    "Build the float32 run on the CPU: the story's bench with only the device changed, and run "
    "encoder_moves on it with experiments.adam().",
    (
        _run_on(ADAM, **F64),
        _run_on(ADAM),
        _run_on(ADAM, profile=LATER),
        _run_on(ADAM, device="cpu", init="contiguous"),
        _run_on(ADAM, device="cpu", seed=2),
        _run_on(ADAM, device="cpu", batch_size=256),
        _run_on(None, device="cpu"),
        _run_on(experiments.sgd(), device="cpu"),
        _run_with(_step_without_backward, device="cpu"),
        _run_with(_grads_cleared, device="cpu"),
        _run_on(ADAM, k=16, device="cpu"),
        _run_with(_step_then_backward, device="cpu"),
        _run_on(experiments.adam(eps=1e-3), device="cpu"),
        _run_on(experiments.adam(maximize=True), device="cpu"),
        _run_with(_run_then_to_cpu),
    ),
)
_register_control(
    "02.contiguous_run",
    CONTIGUOUS_RUN,
    _reference_contiguous_run,
    "Build the contiguous run: the story's bench with only the encoder stored contiguously, "
    "and run encoder_moves on it with experiments.adam().",
    (
        _run_on(ADAM),
        _run_on(ADAM, device="cpu", init="contiguous"),
        _run_on(ADAM, profile=LATER, init="contiguous"),
        _run_on(ADAM, init="contiguous", seed=1),
        _run_on(ADAM, init="contiguous", **SMALL),
        _run_on(None, init="contiguous"),
        _run_on(experiments.sgd(), init="contiguous"),
        _run_with(_step_without_backward, init="contiguous"),
        _run_with(_step_then_backward, init="contiguous"),
        _run_on(ADAM, k=16, init="contiguous"),
        _run_on(ADAM, init="contiguous", batch_size=64),
        _run_with(_decoder_transposed_too, init="contiguous"),
        _run_on(experiments.adam(amsgrad=True), init="contiguous"),
        _run_with(_run_then_contiguous),
    ),
)

# ---- 02.differences --------------------------------------------------------------------------

PROPERTIES = ("device", "dtype", "shape", "stride", "is_contiguous")


def _metadata_pairs() -> list[tuple[str, torch.Tensor, torch.Tensor, str]]:
    """(what, a, b, what the pair shows): each pair defeats one shortcut."""
    story = bench(**SMALL).model
    enc, dec = story.encoder.weight.detach(), story.decoder.weight.detach()
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(3))
    row = torch.randn(1, 4, generator=torch.Generator().manual_seed(4))
    return [
        (
            "the encoder weight and a contiguous copy of it",
            enc,
            enc.contiguous(),
            "the same values and shape, stored another way: only metadata tells them apart",
        ),
        (
            "the encoder and decoder weights",
            enc,
            dec,
            "the decoder is the encoder's transpose: another shape and other strides",
        ),
        ("a tensor and its exact clone", x, x.clone(), "a clone keeps every property"),
        ("a tensor and its float64 copy", x, x.double(), "only the dtype differs"),
        (
            "a tensor and its int32 copy",
            x,
            x.int(),
            "only the dtype differs, though both take 4 bytes an element: compare dtypes",
        ),
        (
            "a tensor on the CPU and its copy on the emulated device",
            x,
            x.to(emps.DEVICE),
            "only the device differs",
        ),
        (
            "a tensor and the same values every other column",
            x,
            laid_out(x, "step-sliced"),
            "gaps in memory: other strides, and not contiguous",
        ),
        (
            "a tensor and the same values 7 elements into a storage",
            x,
            laid_out(x, "storage-offset"),
            "an offset into a storage changes neither the strides nor contiguity",
        ),
        (
            "a one-row tensor and the same row read with another (unused) stride",
            row,
            row.as_strided((1, 4), (1, 1)),
            "a dimension of size 1 never uses its stride: other "
            "strides, yet both contiguous, so ask is_contiguous() on its own",
        ),
        (
            "a tensor and its first three rows",
            x,
            x[:3],
            "only the first dimension differs: compare the whole shape, not one size of it",
        ),
        (
            "a tensor and its first three columns",
            x,
            x[:, :3],
            "the same strides, (4, 1), yet the view skips the last element of every row: "
            "the last stride 1 does not make a tensor contiguous, so ask is_contiguous()",
        ),
    ]


def _differences_verdict(
    what: str, pair: tuple[torch.Tensor, torch.Tensor], got: set, want: set, why: str
) -> Verdict | None:
    if got == want:
        return None
    missing, extra = sorted(want - got), sorted(got - want)
    parts = []
    if missing:
        parts.append(f"they differ in {', '.join(missing)} too, and your set leaves it out")
    if extra:
        parts.append(f"{', '.join(extra)} {'is' if len(extra) == 1 else 'are'} the same in both")
    methods = [n for n in ("stride", "is_contiguous") if n in extra]
    a, b = pair
    if methods and (a.stride(), a.storage_offset()) == (b.stride(), b.storage_offset()):
        # the same layout: an extra stride or is_contiguous is a method left uncalled
        parts.append(
            f"call {' and '.join(f'a.{n}()' for n in methods)}: without () it is a bound "
            "method, and two bound methods of different tensors never compare equal"
        )
    return failed(f"wrong for {what} ({why}): " + "; ".join(parts), sorted(got), sorted(want))


def _check_differences(fn: Callable) -> Verdict:
    reference = _reference_differences()
    for what, a, b, why in _metadata_pairs():
        got = fn(a, b)
        if not isinstance(got, (set, frozenset)) or not set(got) <= set(PROPERTIES):
            return failed(
                f"return a set of names from {PROPERTIES}; for {what} you returned {got!r}"
            )
        verdict = _differences_verdict(what, (a, b), set(got), reference(a, b), why)
        if verdict is not None:
            return verdict
    return passed(
        "your comparison sees every metadata difference: the encoder differs from a contiguous "
        "copy of itself only in its stride (and so its contiguity)."
    )


def _reference_differences():
    def differences(a, b):
        mine = (a.device, a.dtype, a.shape, a.stride(), a.is_contiguous())
        theirs = (b.device, b.dtype, b.shape, b.stride(), b.is_contiguous())
        names = ("device", "dtype", "shape", "stride", "is_contiguous")
        return {n for n, x, y in zip(names, mine, theirs, strict=True) if x != y}

    return differences


def _differences_of(properties: tuple[str, ...], call: bool = True, calling: tuple = ()):
    """Each property as an attribute; methods called (all with `call`, else those `calling`)."""

    def differences(a, b):
        def value(t, name):
            got = getattr(t, name)
            return got() if (call or name in calling) and callable(got) else got

        return {n for n in properties if value(a, n) != value(b, n)}

    return differences


def _differences_by(**readings: Callable):
    """The reference, with some properties read another way (e.g. shape as numel)."""
    plain = {
        "device": lambda t: t.device,
        "dtype": lambda t: t.dtype,
        "shape": lambda t: t.shape,
        "stride": lambda t: t.stride(),
        "is_contiguous": lambda t: t.is_contiguous(),
    }
    read = {**plain, **readings}

    def differences(a, b):
        return {n for n in PROPERTIES if read[n](a) != read[n](b)}

    return differences


def _stride_means_contiguity():
    def differences(a, b):
        found = {n for n in ("device", "dtype", "shape") if getattr(a, n) != getattr(b, n)}
        if a.stride() != b.stride():
            found |= {"stride", "is_contiguous"}
        return found

    return differences


register(
    Exercise(
        name="02.differences",
        prompt="Write differences(a, b) -> set of the metadata properties (device, dtype, "
        "shape, stride, is_contiguous) in which two tensors differ.",
        checker=_check_differences,
        hint="a.device, a.dtype and a.shape are attributes; a.stride() and a.is_contiguous() "
        "are methods: call them. Compare each of the five on its own.",
        reference=_reference_differences,
        wrong_answers=(
            lambda: _differences_of(("device", "dtype", "shape")),
            lambda: _differences_of(PROPERTIES, call=False),
            lambda: lambda a, b: set() if torch.equal(a.cpu(), b.cpu()) else {"shape"},
            lambda: _differences_of(("device", "dtype", "shape", "stride")),
            lambda: _differences_of(("stride", "is_contiguous")),
            _stride_means_contiguity,
            lambda: lambda a, b: {"stride"} if a.stride() != b.stride() else set(),
            lambda: _differences_of(PROPERTIES, call=False, calling=("stride",)),
            lambda: _differences_of(PROPERTIES, call=False, calling=("is_contiguous",)),
            lambda: _differences_by(dtype=lambda t: t.element_size()),
            lambda: _differences_by(shape=lambda t: t.numel()),
            lambda: _differences_by(stride=lambda t: (t.stride(), t.storage_offset())),
            lambda: _differences_by(shape=lambda t: sorted(t.shape)),
            lambda: lambda a, b: {"stride", "is_contiguous"},  # the encoder's, printed above
            lambda: _differences_by(device=lambda t: t.cpu().device),
            lambda: _differences_by(is_contiguous=lambda t: t.stride()[-1] == 1),
            lambda: _differences_by(shape=len),
            lambda: _differences_by(shape=lambda t: t.shape[-1]),
            lambda: _differences_by(
                is_contiguous=lambda t: list(t.stride()) == sorted(t.stride(), reverse=True)
            ),
        ),
    )
)


# ---- 02.contiguous (a prediction) -----------------------------------------------------------


def _contiguous_moves() -> str:
    return (
        "yes" if reference_encoder_moves()(bench(init="contiguous"), experiments.adam()) else "no"
    )


register_prediction(
    Prediction(
        "02.contiguous",
        "Same values, same device, same profile: if encoder.weight were contiguous, would one "
        "Adam step move it?",
        ("yes", "no"),
        _contiguous_moves,
        "Yes: with the stride the only difference, Adam moves a contiguous encoder on the same "
        "emulated device. Something on this profile mishandles a non-contiguous tensor.",
    )
)
