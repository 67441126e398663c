"""The control runs and 02.differences: the notebook's answers, benches with a second variable or
an experiment run wrong, and comparisons that miss a difference."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from course.isolation import experiments
from course.isolation.experiments import ENCODER, Bench
from tests.corpus import Corpus
from tests.isolation.exercises.corpus_stepping import encoder_moves

LATER = "fixed-macos14"  # a profile without the story's bug
SMALL = {"d_model": 64, "n_features": 256, "k": 8}
F64 = {"device": "cpu", "dtype": torch.float64}
ADAM = experiments.adam()


def _float64_run():
    cpu64 = experiments.bench(device="cpu", dtype=torch.float64)
    print("float64 on the CPU: encoder moved =", encoder_moves(cpu64, experiments.adam()))
    return cpu64


def _float32_run():
    cpu32 = experiments.bench(device="cpu")
    print("float32 on the CPU: encoder moved =", encoder_moves(cpu32, experiments.adam()))
    return cpu32


def _contiguous_run():
    contiguous = experiments.bench(init="contiguous")
    print("contiguous encoder, same device: moved =", encoder_moves(contiguous, experiments.adam()))
    return contiguous


def _adam_stepped_by_hand(b: Bench) -> None:
    """The experiment without encoder_moves: an Adam made and stepped inside `with bench:`."""
    before = b.snapshot()[ENCODER]
    b.backward()
    optimizer = torch.optim.Adam(b.model.parameters(), lr=1e-3)
    with b:
        optimizer.step()
    print("moved:", not torch.equal(before, b.snapshot()[ENCODER]))


def _positional_cpu32() -> Bench:
    cpu32 = experiments.bench("2.2.1-macos14", "cpu")
    encoder_moves(cpu32, experiments.adam(lr=1e-3))
    return cpu32


def _run_on(update: Callable | None = None, **settings) -> Callable[[], Bench]:
    """A bench built with `settings`, the experiment run on it with `update` (None: not run)."""
    return _run_with(lambda b: update is None or encoder_moves(b, update), **settings)


def _run_with(experiment: Callable[[Bench], object], **settings) -> Callable[[], Bench]:
    """A bench built with `settings`, then `experiment` run on it."""

    def build() -> Bench:
        made = experiments.bench(**settings)
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


def _run_then(change: Callable[[Bench], None]) -> Callable[[Bench], None]:
    """The story's run first, the change under test after it (a run that measured the story)."""

    def experiment(b: Bench) -> None:
        encoder_moves(b, experiments.adam())
        change(b)

    return experiment


def _change_then_run(change: Callable[[Bench], None]) -> Callable[[Bench], None]:
    """The change made by hand on a built bench, then the run: only the bench's state counts."""

    def experiment(b: Bench) -> None:
        change(b)
        encoder_moves(b, experiments.adam())

    return experiment


def _made_contiguous(b: Bench) -> None:
    weight = b.parameter(ENCODER)
    with torch.no_grad(), b:
        weight.data = weight.data.contiguous()


def _made_double(b: Bench) -> None:
    b.model.double()


def _differences():
    def differences(a, b):
        mine = (a.device, a.dtype, a.shape, a.stride(), a.is_contiguous())
        theirs = (b.device, b.dtype, b.shape, b.stride(), b.is_contiguous())
        names = ("device", "dtype", "shape", "stride", "is_contiguous")
        return {n for n, x, y in zip(names, mine, theirs, strict=True) if x != y}

    return differences


PROPERTIES = ("device", "dtype", "shape", "stride", "is_contiguous")


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


def _differences_in_a_loop():
    def differences(a, b):
        found = set()
        for name in PROPERTIES:
            x, y = getattr(a, name), getattr(b, name)
            if callable(x):
                x, y = x(), y()
            if x != y:
                found.add(name)
        return found

    return differences


def _differences_of_dicts():
    def differences(a, b):
        def meta(t):
            return {
                "device": t.device,
                "dtype": t.dtype,
                "shape": tuple(t.size()),
                "stride": tuple(t.stride()),
                "is_contiguous": t.is_contiguous(),
            }

        mine, theirs = meta(a), meta(b)
        return frozenset(k for k in mine if mine[k] != theirs[k])

    return differences


SHAPE = "differ in shape too"

CORPORA = (
    Corpus(
        "02.float64_run",
        _float64_run,
        wrong={
            "dtype forgotten": (_run_on(ADAM, device="cpu"), "your bench is torch.float32"),
            "the story's bench": (_run_on(ADAM), "live on emps"),
            "+ a contiguous init": (
                _run_on(ADAM, init="contiguous", **F64),
                "changed its layout too",
            ),
            "another seed": (_run_on(ADAM, seed=1, **F64), "seed 1"),
            "a smaller model": (_run_on(ADAM, **SMALL, **F64), "other sizes"),
            "built, never run": (_run_on(None, **F64), "no step has run"),
            "another optimizer": (_run_on(experiments.sgd(), **F64), "stepped SGD"),
            "another learning rate": (
                _run_on(experiments.adam(lr=1e-2), **F64),
                "(0.01, (0.9, 0.999))",
            ),
            "the printed bool": (lambda: True, "give the bench"),
            "no backward": (_run_with(_step_without_backward, **F64), "no backward ran"),
            "zero_grad before the step": (
                _run_with(_grads_cleared, **F64),
                "cleared before the step",
            ),
            "another k": (_run_on(ADAM, k=16, **F64), "k = 16"),
            "made float64 after the run": (
                _run_with(_run_then(_made_double), device="cpu"),
                "was torch.float32: the dtype and the device changed only after",
            ),
            "weight decay": (
                _run_on(experiments.adam(weight_decay=0.01), **F64),
                "weight_decay = 0.01",
            ),
        },
        right={"made float64 by hand": _run_with(_change_then_run(_made_double), device="cpu")},
    ),
    Corpus(
        "02.float32_run",
        _float32_run,
        wrong={
            "the float64 run again": (_run_on(ADAM, **F64), "your bench is torch.float64"),
            "the story's bench": (_run_on(ADAM), "live on emps"),
            "a later profile, not the CPU": (
                _run_on(ADAM, profile=LATER),
                "another profile is still the emulated device",
            ),
            "+ a contiguous init": (
                _run_on(ADAM, device="cpu", init="contiguous"),
                "changed its layout too",
            ),
            "another seed": (_run_on(ADAM, device="cpu", seed=2), "seed 2"),
            "other batches": (_run_on(ADAM, device="cpu", batch_size=256), "batch size 256"),
            "built, never run": (_run_on(None, device="cpu"), "no step has run"),
            "another optimizer": (_run_on(experiments.sgd(), device="cpu"), "stepped SGD"),
            "no backward": (_run_with(_step_without_backward, device="cpu"), "no backward ran"),
            "zero_grad before the step": (
                _run_with(_grads_cleared, device="cpu"),
                "cleared before the step",
            ),
            "another k": (_run_on(ADAM, k=16, device="cpu"), "k = 16"),
            "step, then backward": (
                _run_with(_step_then_backward, device="cpu"),
                "the step ran before the backward",
            ),
            "another eps": (_run_on(experiments.adam(eps=1e-3), device="cpu"), "eps = 0.001"),
            "Adam climbing the loss": (
                _run_on(experiments.adam(maximize=True), device="cpu"),
                "maximize = True",
            ),
            "the story's run, then the CPU": (
                _run_with(_run_then(lambda b: b.model.to("cpu"))),
                "was on emps: the device changed only after the run",
            ),
        },
        right={
            "the profile and device by position": _positional_cpu32,
            "float32 spelled out": _run_on(ADAM, device="cpu", dtype=torch.float32),
            "Adam as a partial": _run_on(partial(torch.optim.Adam, lr=1e-3), device="cpu"),
            "Adam stepped by hand inside with bench": _run_with(
                _adam_stepped_by_hand, device="cpu"
            ),
        },
    ),
    Corpus(
        "02.contiguous_run",
        _contiguous_run,
        wrong={
            "the story's bench": (_run_on(ADAM), "still stored transposed"),
            "+ the CPU": (_run_on(ADAM, device="cpu", init="contiguous"), "live on cpu"),
            "+ a later profile": (
                _run_on(ADAM, profile=LATER, init="contiguous"),
                "also changed the profile",
            ),
            "another seed": (_run_on(ADAM, init="contiguous", seed=1), "seed 1"),
            "a smaller model": (_run_on(ADAM, init="contiguous", **SMALL), "other sizes"),
            "built, never run": (_run_on(None, init="contiguous"), "no step has run"),
            "another optimizer": (_run_on(experiments.sgd(), init="contiguous"), "stepped SGD"),
            "no backward": (
                _run_with(_step_without_backward, init="contiguous"),
                "no backward ran",
            ),
            "step, then backward": (
                _run_with(_step_then_backward, init="contiguous"),
                "the step ran before the backward",
            ),
            "another k": (_run_on(ADAM, k=16, init="contiguous"), "k = 16"),
            "other batches": (_run_on(ADAM, init="contiguous", batch_size=64), "batch size 64"),
            "the decoder transposed too": (
                _run_with(_decoder_transposed_too, init="contiguous"),
                "decoder.weight is not contiguous",
            ),
            "AMSGrad": (
                _run_on(experiments.adam(amsgrad=True), init="contiguous"),
                "amsgrad = True",
            ),
            "the story's run, then made contiguous": (
                _run_with(_run_then(_made_contiguous)),
                "was not contiguous (stored transposed)",
            ),
        },
        right={"made contiguous by hand": _run_with(_change_then_run(_made_contiguous))},
    ),
    Corpus(
        "02.differences",
        _differences,
        wrong={
            "device, dtype and shape only": (
                lambda: _differences_of(("device", "dtype", "shape")),
                "is_contiguous, stride too",
            ),
            "methods left uncalled": (
                lambda: _differences_of(PROPERTIES, call=False),
                "call a.stride() and a.is_contiguous()",
            ),
            "compares values": (
                lambda: lambda a, b: set() if torch.equal(a.cpu(), b.cpu()) else {"shape"},
                "only metadata tells them apart",
            ),
            "no is_contiguous": (
                lambda: _differences_of(("device", "dtype", "shape", "stride")),
                "is_contiguous too",
            ),
            "stride and is_contiguous only": (
                lambda: _differences_of(("stride", "is_contiguous")),
                "shape too",
            ),
            "a stride difference taken for contiguity": (
                _stride_means_contiguity,
                "ask is_contiguous() on its own",
            ),
            "stride only": (
                lambda: lambda a, b: {"stride"} if a.stride() != b.stride() else set(),
                "is_contiguous too",
            ),
            "is_contiguous left uncalled": (
                lambda: _differences_of(PROPERTIES, call=False, calling=("stride",)),
                "call a.is_contiguous()",
            ),
            "stride left uncalled": (
                lambda: _differences_of(PROPERTIES, call=False, calling=("is_contiguous",)),
                "call a.stride()",
            ),
            "dtype by element size": (
                lambda: _differences_by(dtype=lambda t: t.element_size()),
                "both take 4 bytes",
            ),
            "shape by numel": (lambda: _differences_by(shape=lambda t: t.numel()), SHAPE),
            "the storage offset taken for the stride": (
                lambda: _differences_by(stride=lambda t: (t.stride(), t.storage_offset())),
                "offset into a storage changes neither",
            ),
            "shape sorted": (lambda: _differences_by(shape=lambda t: sorted(t.shape)), SHAPE),
            "the encoder's printed set": (lambda: lambda a, b: {"stride", "is_contiguous"}, SHAPE),
            "devices after .cpu()": (
                lambda: _differences_by(device=lambda t: t.cpu().device),
                "differ in device too",
            ),
            "stride[-1] == 1": (
                lambda: _differences_by(is_contiguous=lambda t: t.stride()[-1] == 1),
                "the last stride 1 does not make a tensor contiguous",
            ),
            "shape by len": (lambda: _differences_by(shape=len), SHAPE),
            "shape[-1] only": (
                lambda: _differences_by(shape=lambda t: t.shape[-1]),
                "compare the whole shape",
            ),
            "contiguity as decreasing strides": (
                lambda: _differences_by(
                    is_contiguous=lambda t: list(t.stride()) == sorted(t.stride(), reverse=True)
                ),
                "is_contiguous too",
            ),
        },
        right={
            "getattr, calling the methods": lambda: _differences_of(PROPERTIES),
            "a loop that adds to a set": _differences_in_a_loop,
            "dicts of metadata, a frozenset, size() for shape": _differences_of_dicts,
            "shape as a list, device as a string": lambda: _differences_by(
                shape=lambda t: list(t.shape), device=lambda t: str(t.device)
            ),
        },
    ),
)
