"""A case's training run: the user's build code, seeded, trained full batch, and its report.

A `Scenario` is a design (course.mystery.families) plus the seed of its data and initial
weights. `run` builds the model with the design's own code (the code `case.source()` shows),
optionally lets a learner's patch change it, trains it with the model's own recipe
(`model.configure_optimizer()`) and returns a `ScenarioReport`: the loss curve, a held-out
metric, and for every parameter how much of it moved, which is what a user looks at before they
know what is wrong.
"""

from __future__ import annotations

import contextlib
import functools
import linecache
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from course import emps
from course.errors import CourseError
from course.mystery import models
from course.mystery.families import Design
from course.progressbar import Progress

Patch = Callable[[nn.Module], nn.Module]
# The names the user's build code may use (see families.Design.source).
USER_NAMES = {
    name: getattr(models, name)
    for name in (
        "MLP",
        "ConvNet",
        "Attention",
        "BagOfWords",
        "load_flax",
        "keep_even_inputs",
        "load_packed",
        "load_tflite",
        "compact",
        "teacher_blobs",
        "reviews",
        "stripes",
        "teacher_sequences",
    )
}


def compiled(source: str, label: str, names: dict[str, object]) -> dict[str, object]:
    """Run generated code in a namespace of its own, registered so tracebacks show its lines."""
    filename = f"<{label}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, object] = {"torch": torch, "nn": nn, **names}
    exec(compile(source, filename, "exec"), namespace)  # the course's own generated code
    return namespace


@functools.lru_cache(maxsize=256)
def _user_code(source: str) -> dict[str, object]:
    return compiled(source, "the user's code", USER_NAMES)


@dataclass(frozen=True)
class Scenario:
    """One training setup: the user's design and the seed of its data and initial weights."""

    design: Design
    seed: int

    @property
    def steps(self) -> int:
        """Full-batch training steps."""
        return self.design.steps

    @property
    def task(self) -> str:
        """ "classify" or "regress"."""
        return self.design.task

    def setup(self, device: str) -> tuple[nn.Module, models.Data]:
        """The model on `device` and the data (on the CPU), both drawn from the seed."""
        code = _user_code(self.design.source())
        generator = torch.Generator().manual_seed(self.seed)
        data = code["data"](generator)  # first: the model's numbers come after the data's
        return code["build"](device, generator), data

    def data(self) -> models.Data:
        """The data alone (the same as `setup` draws)."""
        return _user_code(self.design.source())["data"](torch.Generator().manual_seed(self.seed))

    def loss(self, model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The training loss of `model` on a batch: cross-entropy or mean squared error."""
        output = model(inputs)
        if self.task == "classify":
            return F.cross_entropy(output, targets)
        return F.mse_loss(output, targets)


@dataclass
class ScenarioReport:
    """What one run of a scenario showed."""

    device: str
    task: str
    losses: list[float]
    metric: float  # held-out accuracy (classify) or held-out loss (regress)
    moved: dict[str, float] = field(default_factory=dict)  # fraction of elements that changed
    norms: dict[str, tuple[float, float]] = field(default_factory=dict)  # (initial, final)

    @property
    def final_loss(self) -> float:
        """The training loss at the last step."""
        return self.losses[-1]

    @property
    def first_bad_step(self) -> int | None:
        """The first step (1-based) with a non-finite loss or one 1000x the first, if any."""
        for step, value in enumerate(self.losses, 1):
            if not math.isfinite(value) or value > 1e3 * self.losses[0]:
                return step
        return None

    @property
    def blew_up(self) -> bool:
        """A non-finite loss, or one a thousand times the first step's."""
        return self.first_bad_step is not None

    def frozen(self) -> list[str]:
        """Parameters of which not one element changed."""
        return [name for name, fraction in self.moved.items() if fraction == 0.0]

    def summary(self) -> str:
        """A few lines a user would paste into a bug report."""
        metric = "held-out accuracy" if self.task == "classify" else "held-out loss"
        lines = [
            f"on {self.device}: loss {self.losses[0]:.4g} -> {self.final_loss:.4g} in "
            f"{len(self.losses)} steps, {metric} {self.metric:.3g}",
            f"  {'parameter':<16} {'moved':>7}  norm before -> after",
        ]
        lines += [
            f"  {name:<16} {self.moved[name]:7.1%}  {before:.4g} -> {after:.4g}"
            for name, (before, after) in self.norms.items()
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _values(model: nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.detach().cpu().double().clone() for name, p in model.named_parameters()}


def apply_patch(model: nn.Module, patch: Patch, device: str) -> nn.Module:
    """Apply a learner's patch: same parameters, same initial values, on the same device."""
    before = _values(model)
    kinds = {type(p) for p in model.parameters()}
    patched = patch(model)
    if not isinstance(patched, nn.Module):
        raise CourseError(f"your patch returned {type(patched).__name__}: return the model")
    after = {name: p for name, p in patched.named_parameters()}
    if {n: p.shape for n, p in after.items()} != {n: p.shape for n, p in before.items()}:
        raise CourseError(
            "your patch changed the model's parameters (names or shapes): fix the layout, "
            "keep the model"
        )
    devices = {p.device.type for p in after.values()}
    if devices != {torch.device(device).type}:
        raise CourseError(
            f"your patch moved parameters to {sorted(devices)}: the fix must run on {device} "
            "(moving to the CPU changes two variables at once)"
        )
    odd = sorted({type(p).__name__ for p in after.values()} - {k.__name__ for k in kinds})
    if odd:
        raise CourseError(
            f"your patch turned parameters into {', '.join(odd)}: a tensor subclass that "
            "intercepts the ops changes the device, not the model"
        )
    changed = [n for n, p in _values(patched).items() if not torch.equal(p, before[n])]
    if changed:
        raise CourseError(
            f"your patch changed the initial values of {', '.join(changed)}: a fix starts from "
            "the model's own initialisation (no weights from elsewhere); change how tensors are "
            "stored or computed, not their values"
        )
    return patched


def run(
    scenario: Scenario,
    device: str = emps.DEVICE,
    patch: Patch | None = None,
    progress: Progress | None = None,
    during_steps: contextlib.AbstractContextManager | None = None,
) -> ScenarioReport:
    """Train a scenario once, full batch, on `device` (under the active emulated backend).

    `during_steps` is entered around each step's forward, backward and optimizer step (and
    nothing else): check_fix watches there for compute that leaves the device."""
    model, data = scenario.setup(device)
    if patch is not None:
        model = apply_patch(model, patch, device)
    before = {name: p.detach().float().cpu().clone() for name, p in model.named_parameters()}
    optimizer = model.configure_optimizer()
    if not type(optimizer).__module__.startswith("torch.optim"):
        raise CourseError(
            f"the model's configure_optimizer returned a {type(optimizer).__name__}: a fix may "
            "choose torch's optimizer and its options (foreach, fused...), not replace it"
        )
    x, y = data.x.to(device), data.y.to(device)
    losses = []
    watch = contextlib.nullcontext() if during_steps is None else during_steps
    for step in range(scenario.steps):
        with watch:
            optimizer.zero_grad()
            value = scenario.loss(model, x, y)
            value.backward()
            optimizer.step()
        losses.append(value.item())
        if progress is not None:
            progress(step + 1, scenario.steps, f"loss {losses[-1]:.4g}")
    after = {name: p.detach().float().cpu() for name, p in model.named_parameters()}
    with torch.no_grad():
        output = model(data.x_test.to(device)).float().cpu()
    if scenario.task == "classify":
        metric = (output.argmax(1) == data.y_test).float().mean().item()
    else:
        metric = F.mse_loss(output, data.y_test).item()
    return ScenarioReport(
        device,
        scenario.task,
        losses,
        metric,
        {n: (after[n] != before[n]).float().mean().item() for n in before},
        {n: (before[n].norm().item(), after[n].norm().item()) for n in before},
    )
