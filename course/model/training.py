"""Train an SAE and write down everything the investigation needs, step by step.

The history holds what the story's author had to dig for by hand: the loss per step, how far
each parameter has moved from its initial value (bitwise: "frozen" means *equal*, not "small"),
gradient statistics, and Adam's state. Tensors may live on the CPU or the emulated device.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from course.errors import CourseError, require_choice, require_int, require_range, require_seed
from course.model.data import SyntheticData
from course.model.sae import TopKSAE
from course.progressbar import Progress

OPTIMIZERS = ("adam", "sgd")
SCHEDULES = ("constant", "cosine", "warmup")
MAX_TRAIN_STEPS = 100_000
MAX_TRAIN_BATCH = 8192  # twice the course's dataset: larger batches only repeat samples
MAX_AUX_WEIGHT = 10.0


@dataclass
class History:
    """Per-step records of one training run (parameters named as in `model.named_parameters()`)."""

    loss: list[float] = field(default_factory=list)
    change: dict[str, list[float]] = field(default_factory=dict)  # max |p - p0| per step
    grad_max: dict[str, float] = field(default_factory=dict)  # last step's max |grad|
    grad_zero_fraction: dict[str, float] = field(default_factory=dict)
    exp_avg_max: dict[str, float] = field(default_factory=dict)  # Adam only, after training
    exp_avg_sq_max: dict[str, float] = field(default_factory=dict)
    frozen: dict[str, bool] = field(default_factory=dict)  # bitwise equal to the initial value
    layout: dict[str, dict[str, object]] = field(default_factory=dict)

    @property
    def tail(self) -> int:
        """How many of the last steps `final_loss` averages: 10% of the run, at least one."""
        return max(1, len(self.loss) // 10)

    @property
    def final_loss(self) -> float:
        """Mean loss over the last `tail` steps: one step's loss is noisy (a random batch),
        so this is the number to compare between runs, not the progress bar's last value."""
        return sum(self.loss[-self.tail :]) / self.tail


def _schedule(name: str, steps: int) -> Callable[[int], float]:
    if name == "constant":
        return lambda step: 1.0
    if name == "cosine":
        return lambda step: 0.5 * (1 + torch.cos(torch.tensor(torch.pi * step / steps)).item())
    return lambda step: min(1.0, (step + 1) / max(1, steps // 10))


def make_optimizer(name: str, params, lr: float, betas=(0.9, 0.999)) -> torch.optim.Optimizer:
    """Adam (the story's) or plain SGD, as the investigation compares them."""
    require_choice("optimizer", name, OPTIMIZERS)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, betas=betas)
    return torch.optim.SGD(params, lr=lr)


def check_args(
    steps: int,
    lr: float,
    batch_size: int,
    schedule: str,
    seed: int = 0,
    aux_weight: float = 0.0,
    optimizer: str = "adam",
    betas: object = (0.9, 0.999),
) -> None:
    """Validate training arguments up front, naming the bad value and what is allowed."""
    require_int("steps", steps, 1, MAX_TRAIN_STEPS)
    require_range("lr", lr, 1e-8, 10.0)
    require_int("batch_size", batch_size, 1, MAX_TRAIN_BATCH)
    require_choice("schedule", schedule, SCHEDULES)
    require_seed(seed)
    require_range("aux_weight", aux_weight, 0.0, MAX_AUX_WEIGHT)
    require_choice("optimizer", optimizer, OPTIMIZERS)
    require_betas(betas)


def require_betas(betas: object) -> None:
    """Adam's (beta1, beta2): two numbers, each at least 0 and below 1 (torch's own bounds)."""
    pair = isinstance(betas, (tuple, list)) and len(betas) == 2
    numbers = pair and all(
        isinstance(b, (int, float)) and not isinstance(b, bool) and 0.0 <= b < 1.0 for b in betas
    )
    if not numbers:
        raise CourseError(
            f"betas={betas!r} is not allowed: give two numbers (beta1, beta2), each from 0 up "
            "to but not including 1, e.g. (0.9, 0.999)"
        )


def train(
    model: TopKSAE,
    data: SyntheticData,
    *,
    steps: int = 200,
    lr: float = 1e-3,
    batch_size: int = 256,
    optimizer: str = "adam",
    betas=(0.9, 0.999),
    schedule: str = "constant",
    aux_weight: float = 0.0,
    seed: int = 0,
    progress: Progress | None = None,
) -> History:
    """Train `model` (already on its device) to reconstruct `data.x`; returns the History.

    `progress(done, total, note)` is called after every step, the note giving that step's loss.
    """
    check_args(steps, lr, batch_size, schedule, seed, aux_weight, optimizer, betas)
    device = next(model.parameters()).device
    x_all = data.x.to(device)
    params = dict(model.named_parameters())
    initial = {name: p.detach().cpu().clone() for name, p in params.items()}
    opt = make_optimizer(optimizer, model.parameters(), lr, betas)
    scale = _schedule(schedule, steps)
    gen = torch.Generator().manual_seed(seed)
    history = History(change={name: [] for name in params})
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr * scale(step)
        batch = x_all[torch.randint(0, len(data.x), (batch_size,), generator=gen).to(device)]
        reconstruction = model(batch)
        loss = (reconstruction - batch).pow(2).sum(-1).mean()
        total = loss + aux_weight * model.aux_loss(batch, reconstruction) if aux_weight else loss
        opt.zero_grad()
        total.backward()
        opt.step()
        history.loss.append(loss.item())
        for name, p in params.items():
            history.change[name].append((p.detach().cpu() - initial[name]).abs().max().item())
        if progress is not None:
            progress(step + 1, steps, f"loss {history.loss[-1]:.4g}")
    _summarise(history, params, initial, opt)
    return history


def _summarise(history: History, params, initial, opt) -> None:
    for name, p in params.items():
        grad = p.grad.detach().cpu()
        history.grad_max[name] = grad.abs().max().item()
        history.grad_zero_fraction[name] = (grad == 0).float().mean().item()
        history.frozen[name] = torch.equal(p.detach().cpu(), initial[name])
        history.layout[name] = {
            "device": str(p.device),
            "dtype": str(p.dtype).replace("torch.", ""),
            "shape": list(p.shape),
            "stride": list(p.stride()),
            "contiguous": p.is_contiguous(),
        }
        state = opt.state.get(p, {})
        if "exp_avg" in state:
            history.exp_avg_max[name] = state["exp_avg"].detach().cpu().abs().max().item()
            history.exp_avg_sq_max[name] = state["exp_avg_sq"].detach().cpu().abs().max().item()
