"""The training scenarios of the mystery cases, and the report a run produces.

A scenario is a model builder, a dataset and an optimizer, trained full-batch for a few dozen
steps (about a second on the emulated device). `run` returns a `ScenarioReport`: the loss
curve, a held-out metric, and for every parameter how much of it moved and how its norm changed,
which is what a user looks at before they know what is wrong.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from course import emps
from course.errors import CourseError
from course.mystery import models
from course.progressbar import Progress

Patch = Callable[[nn.Module], nn.Module]
# Every scenario trains on this seed's data and initial weights. tests/mystery verifies each
# case's symptom, decoy and fix on exactly these runs, so every learner who opens a case sees a
# run that is known to show it (the case seed only picks the case).
SEED = 1


@dataclass(frozen=True)
class Scenario:
    """One training setup: what model, on what data, with which optimizer, for how long."""

    name: str
    description: str  # what the model is, in the user's words (never the habit that matters)
    task: str  # "classify" (cross-entropy, accuracy) or "regress" (MSE, held-out loss)
    build: Callable[[str, torch.Generator], nn.Module]
    data: Callable[[torch.Generator], models.Data]
    optimizer: Callable[[list[nn.Parameter]], torch.optim.Optimizer]
    code: tuple[object, ...]  # the classes and functions a learner reads (and may patch)
    steps: int = 40

    def recipe(self) -> str:
        """How it trains, in one line, read from the optimizer itself."""
        optimizer = self.optimizer([nn.Parameter(torch.zeros(1))])
        settings = ", ".join(f"{key}={optimizer.defaults[key]:g}" for key in ("lr", "weight_decay"))
        loss = "cross-entropy" if self.task == "classify" else "mean squared error"
        return f"{type(optimizer).__name__}({settings}), full batch, {self.steps} steps, {loss}"


@dataclass
class ScenarioReport:
    """What one run of a scenario showed."""

    scenario: str
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
    def blew_up(self) -> bool:
        """A non-finite loss, or one a thousand times the first step's."""
        return any(not math.isfinite(x) or x > 1e3 * self.losses[0] for x in self.losses)

    def frozen(self) -> list[str]:
        """Parameters of which not one element changed."""
        return [name for name, fraction in self.moved.items() if fraction == 0.0]

    def summary(self) -> str:
        """A few lines a user would paste into a bug report."""
        metric = "held-out accuracy" if self.task == "classify" else "held-out loss"
        lines = [
            f"{self.scenario} on {self.device}: loss {self.losses[0]:.4g} -> "
            f"{self.final_loss:.4g} in {len(self.losses)} steps, {metric} {self.metric:.3g}",
            f"  {'parameter':<14} {'moved':>7}  norm before -> after",
        ]
        lines += [
            f"  {name:<14} {self.moved[name]:7.1%}  {before:.4g} -> {after:.4g}"
            for name, (before, after) in self.norms.items()
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def adam(params, lr: float = 1e-2) -> torch.optim.Optimizer:
    """Adam as most people use it (single-tensor path, so every kernel call is visible)."""
    return torch.optim.Adam(params, lr=lr, foreach=False)


def adamw(params) -> torch.optim.Optimizer:
    """AdamW with weight decay."""
    return torch.optim.AdamW(params, lr=3e-2, weight_decay=0.1, foreach=False)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "ortho-mlp",
            "a three-layer MLP classifier",
            "classify",
            models.build_ortho_mlp,
            models.teacher_blobs,
            adam,
            (models.OrthoMLP, models.build_ortho_mlp),
        ),
        Scenario(
            "bag-of-words",
            "a review scorer on word counts and pretrained word vectors",
            "regress",
            models.build_bag_of_words,
            models.reviews,
            adam,
            (models.BagOfWords, models.build_bag_of_words),
            steps=30,
        ),
        Scenario(
            "border-cnn",
            "a small CNN classifying striped images",
            "classify",
            models.build_border_cnn,
            models.stripes,
            functools.partial(adam, lr=2e-2),
            (models.BorderCNN, models.build_border_cnn),
            steps=30,
        ),
        Scenario(
            "fused-qkv",
            "a one-head attention regressor loaded from a checkpoint",
            "regress",
            models.build_fused_qkv,
            lambda g: models.teacher_sequences(g, models.build_fused_qkv),
            adamw,
            (models.FusedQKV, models.build_fused_qkv),
        ),
        Scenario(
            "half-mlp",
            "a three-layer MLP classifier, memory-saving version",
            "classify",
            models.build_half_mlp,
            models.teacher_blobs,
            adam,
            (models.HalfMLP, models.build_half_mlp),
        ),
        Scenario(
            "biased-heads",
            "a two-head attention regressor with a learned query bias",
            "regress",
            models.build_biased_heads,
            lambda g: models.teacher_sequences(g, models.build_biased_heads),
            functools.partial(adam, lr=2e-2),
            (models.split_heads, models.BiasedHeads, models.build_biased_heads),
        ),
    )
}


def _patched(model: nn.Module, patch: Patch, device: str) -> nn.Module:
    """Apply a learner's patch, refusing one that changes the model's parameters or device."""
    shapes = {name: p.shape for name, p in model.named_parameters()}
    patched = patch(model)
    if not isinstance(patched, nn.Module):
        raise CourseError(f"your patch returned {type(patched).__name__}: return the model")
    new_shapes = {name: p.shape for name, p in patched.named_parameters()}
    if new_shapes != shapes:
        raise CourseError(
            "your patch changed the model's parameters (names or shapes): fix the layout, "
            "keep the model"
        )
    devices = {p.device.type for p in patched.parameters()}
    if devices != {torch.device(device).type}:
        raise CourseError(
            f"your patch moved parameters to {sorted(devices)}: the fix must run on {device} "
            "(moving to the CPU changes two variables at once)"
        )
    return patched


def _snapshot(model: nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.detach().float().cpu().clone() for name, p in model.named_parameters()}


def setup(scenario: Scenario, seed: int, device: str) -> tuple[nn.Module, models.Data]:
    """The scenario's model on `device` and its data (on the CPU), both drawn from `seed`."""
    generator = torch.Generator().manual_seed(seed)
    data = scenario.data(generator)  # first: the model's numbers come after the data's
    return scenario.build(device, generator), data


def data_of(scenario: Scenario, seed: int) -> models.Data:
    """The scenario's data alone (the same as `setup` draws)."""
    return scenario.data(torch.Generator().manual_seed(seed))


def loss(
    scenario: Scenario, model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """The scenario's training loss of `model` on a batch."""
    output = model(inputs)
    if scenario.task == "classify":
        return F.cross_entropy(output, targets)
    return F.mse_loss(output, targets)


def run(
    scenario: Scenario,
    seed: int,
    device: str = emps.DEVICE,
    patch: Patch | None = None,
    progress: Progress | None = None,
) -> ScenarioReport:
    """Train a scenario once, full batch, on `device` (under the active emulated backend)."""
    model, data = setup(scenario, seed, device)
    if patch is not None:
        model = _patched(model, patch, device)
    before = _snapshot(model)
    optimizer = scenario.optimizer(list(model.parameters()))
    x, y = data.x.to(device), data.y.to(device)
    losses = []
    for step in range(scenario.steps):
        optimizer.zero_grad()
        value = loss(scenario, model, x, y)
        value.backward()
        optimizer.step()
        losses.append(value.item())
        if progress is not None:
            progress(step + 1, scenario.steps, f"loss {losses[-1]:.4g}")
    after = _snapshot(model)
    with torch.no_grad():
        output = model(data.x_test.to(device)).float().cpu()
    if scenario.task == "classify":
        metric = (output.argmax(1) == data.y_test).float().mean().item()
    else:
        metric = F.mse_loss(output, data.y_test).item()
    return ScenarioReport(
        scenario.name,
        device,
        scenario.task,
        losses,
        metric,
        {n: (after[n] != before[n]).float().mean().item() for n in before},
        {n: (before[n].norm().item(), after[n].norm().item()) for n in before},
    )
