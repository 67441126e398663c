"""Building blocks for notebook 02's controlled experiments: a bench, never a result table.

A `Bench` is one fresh copy of the story's model on a device and emulated profile of your choice,
with the few moves every experiment of the investigation is made of: one batch, one backward, a
snapshot, one step of any optimizer. Your experiment is a short function of a bench; the
checkers call it on benches you never see (another profile, other seeds and sizes, a
contiguous init, the CPU), so it passes only if its conclusion follows the device. A bench logs
every step taken on its parameters, by `bench.step` or by an optimizer stepped by hand, and
whether the bench was active then, so a checker can also say how an experiment ran.
"""

from __future__ import annotations

import functools
import itertools
import platform
import sys
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from course import emps
from course.errors import CourseError, require_choice, require_int
from course.model.runs import dataset, require_device
from course.model.sae import TopKSAE

ENCODER, DECODER = "encoder.weight", "decoder.weight"
DTYPES = (torch.float32, torch.float64)
MAX_BENCH_BATCH = 4096  # one experiment's batch: the course's whole dataset at most
Update = torch.optim.Optimizer | Callable[[list[torch.nn.Parameter]], object]


Settings = tuple[tuple[str, object], ...]  # an optimizer's hyperparameters, by name
# Settings that choose a code path, not a number: None is the default path, which on a bench's
# devices (the CPU, the emulated one) is the single-tensor loop, as with False.
PATH_SETTINGS = frozenset({"foreach", "fused", "capturable", "differentiable"})


@dataclass(frozen=True)
class StepRecord:
    """One step taken on a bench's parameters: by what, with which settings, and where.

    `optimizer` numbers optimizer objects in the order they first stepped (None for a step
    function), so a log shows whether several steps came from one optimizer or from fresh ones.
    `settings` holds, per parameter group with one of the bench's parameters, every
    hyperparameter of the optimizer (eps, weight_decay, amsgrad, maximize, momentum, ... not
    only lr and betas): any of them changes the numbers, so a checker compares them all.
    `active` says whether the bench was active (its profile in force) during the step.
    `setup` holds each parameter as it was when the step ran: (name, device type, dtype,
    contiguous), so a change made after a run cannot pass for the run's setting.
    """

    update: str
    optimizer: int | None = None
    settings: tuple[Settings, ...] = ()
    active: bool = True
    setup: tuple[tuple[str, str, torch.dtype, bool], ...] = ()

    @property
    def lr(self) -> float | None:
        """The learning rate of the first group (None for a step function)."""
        return dict(self.settings[0]).get("lr") if self.settings else None

    @property
    def betas(self) -> tuple[float, ...] | None:
        """The betas of the first group (None for a step function or an optimizer without)."""
        return dict(self.settings[0]).get("betas") if self.settings else None


def settings_of(optimizer: torch.optim.Optimizer, group: dict) -> Settings:
    """A group's hyperparameters (the optimizer's `defaults` names), as comparable values."""
    return tuple((name, _plain(name, group.get(name))) for name in sorted(optimizer.defaults))


def _plain(name: str, value: object) -> object:
    if name in PATH_SETTINGS:
        return bool(value)
    if isinstance(value, torch.Tensor):
        return value.item()
    if isinstance(value, (tuple, list)):
        return tuple(_plain(name, v) for v in value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def update_settings(update: Update) -> Settings | None:
    """The settings of the optimizer an update makes (None for a step function).

    Why a stand-in parameter: a checker learns what an optimizer factory asks for without
    stepping anything, so it can compare an experiment's log with the update it was handed."""
    made = update if isinstance(update, torch.optim.Optimizer) else None
    if made is None and callable(update):
        made = update([torch.nn.Parameter(torch.zeros(1))])
    if not isinstance(made, torch.optim.Optimizer):
        return None
    return settings_of(made, made.param_groups[0])


@dataclass(eq=False)  # compared by identity: benches are kept in a WeakSet
class Bench:
    """One model on one device under one emulated profile, and the moves an experiment makes.

    Every move runs under the bench's profile (`with bench:` does the same for your own code), so
    the same experiment gives the answer of whichever profile the bench was built with.
    `initial` holds the parameters as built and `steps` logs every step taken on them (also
    by an optimizer you step yourself), so a checker can tell what your experiment did.
    """

    model: TopKSAE
    profile: str | emps.Profile  # a listed profile's name, or a made-up Profile itself
    device: str
    batch_size: int
    seed: int
    _data: torch.Tensor = field(repr=False)
    _gen: torch.Generator = field(repr=False)
    initial: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)
    steps: list[StepRecord] = field(default_factory=list, repr=False)
    _stack: list = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.initial = self.snapshot()
        _BENCHES.add(self)
        _watch_optimizers()

    def __enter__(self) -> Bench:
        context = emps.use_profile(self.profile)
        self._stack.append((context, context.__enter__()))
        return self

    def __exit__(self, *exc) -> None:
        self._stack.pop()[0].__exit__(*exc)

    @property
    def active(self) -> bool:
        """Whether this bench's profile is the one in force now (inside `with bench:`)."""
        return any(backend is emps.current_backend() for _, backend in self._stack)

    def parameter(self, name: str) -> torch.nn.Parameter:
        """A parameter by name ("encoder.weight", "decoder.weight", ...)."""
        names = [n for n, _ in self.model.named_parameters()]
        require_choice("name", name, names)
        return self.model.get_parameter(name)

    def batch(self) -> torch.Tensor:
        """The next batch of samples, on the bench's device (a private generator picks it)."""
        rows = torch.randint(0, len(self._data), (self.batch_size,), generator=self._gen)
        dtype = next(self.model.parameters()).dtype
        return self._data[rows].to(dtype).to(self.model_device)

    @property
    def model_device(self) -> torch.device:
        """Where the model's parameters live (emps:0, cpu, mps:0)."""
        return next(self.model.parameters()).device

    def backward(self) -> float:
        """Forward and backward on a fresh batch: every parameter's .grad is set (old grads are
        dropped first). Returns the batch's reconstruction loss."""
        with self:
            self.model.zero_grad(set_to_none=True)
            x = self.batch()
            loss = (self.model(x) - x).pow(2).sum(-1).mean()
            loss.backward()
        return loss.item()

    def snapshot(self) -> dict[str, torch.Tensor]:
        """A copy of every parameter's values on the CPU, by name: later steps cannot change it."""
        with self:
            return {n: p.detach().cpu().clone() for n, p in self.model.named_parameters()}

    def step(self, update: Update) -> torch.optim.Optimizer | None:
        """One optimizer step on the model's parameters, under the bench's profile.

        `update` is an optimizer you already made (it steps again), or a function of the
        parameter list: an optimizer factory such as `partial(torch.optim.Adam, lr=1e-3)` (a
        fresh optimizer, stepped once and returned, so you can read its `.state`), or your own
        step function such as `partial(sgd_step, lr=1e-3)`.
        """
        with self:
            if isinstance(update, torch.optim.Optimizer):
                update.step()
                return update
            if not callable(update):
                raise CourseError(
                    f"bench.step needs an optimizer or a function of the parameters, "
                    f"not {type(update).__name__}"
                )
            made = update(list(self.model.parameters()))
            if isinstance(made, torch.optim.Optimizer):
                made.step()
                return made
            self.steps.append(StepRecord(_function_name(update), setup=setup_of(self)))
            return None


def setup_of(bench: Bench) -> tuple[tuple[str, str, torch.dtype, bool], ...]:
    """Each parameter's device type, dtype and contiguity now, by name (for the step log)."""
    return tuple(
        (name, p.device.type, p.dtype, p.is_contiguous())
        for name, p in bench.model.named_parameters()
    )


def _function_name(update: Callable) -> str:
    function = update.func if isinstance(update, functools.partial) else update
    return getattr(function, "__name__", type(function).__name__)


_BENCHES: weakref.WeakSet[Bench] = weakref.WeakSet()
_SERIALS: weakref.WeakKeyDictionary[torch.optim.Optimizer, int] = weakref.WeakKeyDictionary()
_NEXT_SERIAL = itertools.count()


@functools.cache
def _watch_optimizers() -> None:
    """Install, once, the hook that logs every optimizer step on a bench's parameters.

    Why torch's hook common to all optimizers: a learner may make and step an optimizer
    themselves, inside `with bench:` or outside it; only this hook sees both, so a checker can
    say that a step ran outside the bench (on whatever profile was in force there).
    """
    register_optimizer_step_pre_hook(_log_step)


def _log_step(optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict) -> None:
    for bench in list(_BENCHES):
        mine = {id(p) for p in bench.model.parameters()}
        groups = [g for g in optimizer.param_groups if mine & {id(p) for p in g["params"]}]
        if groups:
            bench.steps.append(_record(optimizer, groups, bench))


def _record(optimizer: torch.optim.Optimizer, groups: list[dict], bench: Bench) -> StepRecord:
    if optimizer not in _SERIALS:
        _SERIALS[optimizer] = next(_NEXT_SERIAL)
    settings = tuple(settings_of(optimizer, group) for group in groups)
    name = type(optimizer).__name__
    return StepRecord(name, _SERIALS[optimizer], settings, bench.active, setup_of(bench))


def bench(
    profile: str | emps.Profile = emps.DEFAULT_PROFILE,
    device: str = "emps",
    *,
    init: str = "transposed",
    seed: int = 0,
    d_model: int = 384,
    n_features: int = 1536,
    k: int = 32,
    batch_size: int = 128,
    dtype: torch.dtype = torch.float32,
) -> Bench:
    """A fresh story model (same init as the training runs) ready for one experiment.

    The defaults are the story's: the 2.2.1 profile, the emulated device, the transposed init.
    `profile` is a listed profile or a made-up one (`emps.TORCH_2_2_1.with_broken(...)`).
    A dtype the device cannot hold is refused by the device itself, as the real one does.
    """
    chosen = emps.get_profile(profile)  # a CourseError listing the profiles if unknown
    # a listed profile by its name; a made-up one (Profile.with_broken) as itself
    profile = chosen.name if emps.PROFILES.get(chosen.name) is chosen else chosen
    require_device(device)
    require_choice("dtype", dtype, DTYPES)
    require_int("batch_size", batch_size, 1, MAX_BENCH_BATCH)
    model = TopKSAE(d_model, n_features, k, init=init, seed=seed).to(dtype)
    with emps.use_profile(profile):
        model.to(emps.DEVICE if device == "emps" else device)
    data = dataset(d_model=d_model).x
    gen = torch.Generator().manual_seed(seed)
    return Bench(model, profile, device, batch_size, seed, data, gen)


def adam(lr: float = 1e-3, **kwargs) -> Callable[[Iterable[torch.nn.Parameter]], torch.optim.Adam]:
    """An Adam factory for `bench.step` (the story's optimizer), e.g. `adam(betas=(0.9, 0.0))`."""
    return lambda params: torch.optim.Adam(params, lr=lr, **kwargs)


def sgd(lr: float = 1e-3) -> Callable[[Iterable[torch.nn.Parameter]], torch.optim.SGD]:
    """A torch.optim.SGD factory for `bench.step`."""
    return lambda params: torch.optim.SGD(params, lr=lr)


def versions_rows() -> list[dict[str, str]]:
    """What to write down before any experiment: the versions of everything in the stack."""
    return [
        {"what": "emulated device", "version": f"{emps.current_profile().label} (emulated)"},
        {"what": "torch installed here", "version": torch.__version__},
        {"what": "python", "version": platform.python_version()},
        {"what": "platform", "version": f"{sys.platform} ({platform.machine()})"},
    ]


def metadata_rows(model: torch.nn.Module) -> list[dict[str, object]]:
    """Encoder vs decoder weight metadata, the story's table (a reveal, after your comparison)."""
    rows = []
    for name in (ENCODER, DECODER):
        p = model.get_parameter(name)
        rows.append(
            {
                "parameter": name,
                "device": str(p.device),
                "dtype": str(p.dtype),
                "shape": list(p.shape),
                "stride": list(p.stride()),
                "contiguous": "yes" if p.is_contiguous() else "NO",
            }
        )
    return rows
