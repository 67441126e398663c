"""Train the story's SAE on the emulated MPS device, as one call: the runs every lesson makes.

`run()` trains one configuration and returns a `Run` whose `summary()` carries the figures the
investigation turns on, under stable keys (also the keys of `python -m course plateau --json`).
`fresh_model()` and `trainer()` are a run's two halves, for experiments that change something in
between (02's isolation, 06's fixed kernel, 09's fixes). `dataset()` is the course's data (made
once, copied to each caller).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from course import emps
from course.devices import mps_available
from course.errors import CourseError, require_choice
from course.model.data import SyntheticData, make_data
from course.model.sae import TopKSAE
from course.model.training import History, check_args, train
from course.progressbar import bar

DEVICES = ("emps", "cpu", "mps")
QUICK = {"steps": 200, "batch_size": 128, "lr": 3e-3}  # the default experiment: seconds on 2 cores


def require_device(device: str) -> None:
    """One of DEVICES, and "mps" only where this machine has a real MPS device."""
    require_choice("device", device, DEVICES)
    if device == "mps" and not mps_available():
        raise CourseError(
            "device='mps' needs a real Apple-MPS device, and this machine has none "
            "(torch.backends.mps.is_available() is False); use device='emps', the emulated one"
        )


@dataclass
class Run:
    """One training run and how it was configured."""

    history: History
    profile: str
    init: str
    device: str
    model: TopKSAE | None = None  # the trained model, for experiments after training

    def summary(self) -> dict[str, object]:
        """The key figures, under stable keys."""
        h = self.history
        return {
            "profile": self.profile,
            "init": self.init,
            "device": self.device,
            "steps": len(h.loss),
            "final_loss": h.final_loss,
            "encoder_frozen": h.frozen["encoder.weight"],
            "decoder_frozen": h.frozen["decoder.weight"],
            "encoder_max_change": h.change["encoder.weight"][-1],
            "decoder_max_change": h.change["decoder.weight"][-1],
            "encoder_max_exp_avg": h.exp_avg_max.get("encoder.weight"),
            "encoder_max_exp_avg_sq": h.exp_avg_sq_max.get("encoder.weight"),
            "decoder_max_exp_avg_sq": h.exp_avg_sq_max.get("decoder.weight"),
            "encoder_stride": h.layout["encoder.weight"]["stride"],
            "decoder_stride": h.layout["decoder.weight"]["stride"],
        }


_DATA: dict[tuple, SyntheticData] = {}


def dataset(d_model: int = 384, seed: int = 0) -> SyntheticData:
    """The course's synthetic dataset: made once per process, a copy of it to each caller.

    A copy, because a learner's cell may change what it is given in place (`data.x -= ...`):
    with one shared set of tensors, every later run and check in the kernel would train on, and
    be judged against, data that are no longer the course's. Copying them takes milliseconds.
    """
    key = (d_model, seed)
    if key not in _DATA:
        _DATA[key] = make_data(d_model=d_model, seed=seed)
    made = _DATA[key]
    return SyntheticData(made.x.clone(), made.features.clone(), made.codes.clone())


def run(
    profile: str | emps.Profile = emps.DEFAULT_PROFILE,
    init: str = "transposed",
    *,
    device: str = "emps",
    backend: emps.Backend | None = None,
    n_features: int = 1536,
    k: int = 32,
    seed: int = 0,
    data: SyntheticData | None = None,
    **train_kwargs,
) -> Run:
    """Train the story's SAE once; `backend` (e.g. a learner's fixed kernel) overrides `profile`.

    `data` defaults to the course's dataset; the returned Run keeps the trained model.
    """
    require_device(device)
    options = {**QUICK, **train_kwargs}
    options.setdefault("progress", bar("training"))
    known = ("steps", "lr", "batch_size", "schedule", "aux_weight", "optimizer", "betas")
    unknown = sorted(set(options) - set(known) - {"progress"})
    if unknown:
        raise CourseError(f"unknown training options {unknown}; known: {', '.join(known)}")
    check_args(
        options["steps"],
        options["lr"],
        options["batch_size"],
        options.get("schedule", "constant"),
        seed,
        options.get("aux_weight", 0.0),
        options.get("optimizer", "adam"),
        options.get("betas", (0.9, 0.999)),
    )
    chosen = backend or emps.Backend(emps.get_profile(profile))
    data = dataset() if data is None else _require_data(data)
    model = TopKSAE(d_model=data.x.shape[1], n_features=n_features, k=k, init=init, seed=seed)
    with emps.use_backend(chosen):
        model.to(emps.DEVICE if device == "emps" else device)
        history = train(model, data, seed=seed, **options)
    name = chosen.profile.name if device == "emps" else f"{device} (no emulation)"
    return Run(history, name, init, device, model)


def _require_data(data: object) -> SyntheticData:
    """The data a run trains on: a SyntheticData whose samples `x` are a 2-D float tensor."""
    x = getattr(data, "x", None)
    if not isinstance(data, SyntheticData) or not isinstance(x, torch.Tensor) or x.dim() != 2:
        raise CourseError(
            f"data must be a SyntheticData from course.model.data.make_data(...) (samples .x "
            f"of shape (n, d_model)), not {type(data).__name__} {str(data)[:60]!r}"
        )
    if not x.is_floating_point() or len(x) == 0:
        raise CourseError(
            f"data.x must hold float samples, not {x.dtype} of shape {tuple(x.shape)}"
        )
    return data


def fresh_model(
    profile: str | emps.Profile = emps.DEFAULT_PROFILE,
    init: str = "transposed",
    *,
    device: str = "emps",
    seed: int = 0,
    **sizes: int,
) -> TopKSAE:
    """A newly initialised story model on `device` (sizes: d_model, n_features, k)."""
    require_device(device)
    model = TopKSAE(init=init, seed=seed, **sizes)
    with emps.use_profile(profile):
        return model.to(emps.DEVICE if device == "emps" else device)


def trainer(
    profile: str | emps.Profile = emps.DEFAULT_PROFILE, *, steps: int = 30, **train_kwargs
) -> Callable[[TopKSAE], History]:
    """A function that trains a model in place under `profile` (Adam and QUICK's settings by
    default) and returns its History: the "training" step of an experiment."""
    options = {**QUICK, "steps": steps, "progress": None, **train_kwargs}
    check_args(
        options["steps"],
        options["lr"],
        options["batch_size"],
        options.get("schedule", "constant"),
        optimizer=options.get("optimizer", "adam"),
        betas=options.get("betas", (0.9, 0.999)),
    )

    def train_in_place(model: TopKSAE) -> History:
        with emps.use_profile(profile):
            return train(model, dataset(d_model=_width(model)), **options)

    return train_in_place


def _width(model: TopKSAE) -> int:
    return model.encoder.weight.shape[1]
