"""Notebook 02's experiments: narrow "the loss plateaus" down to one measurable fault.

Each function answers one of the story's questions with numbers from a real run on the emulated
device: do gradients flow, does any optimizer move the encoder, what is in Adam's state, do the
red herrings (betas, float64) mean anything, and what differs between encoder and decoder?
"""

from __future__ import annotations

import torch

from course import emps
from course.errors import CourseError
from course.story.plateau import Run, dataset, run
from course.story.sae import TopKSAE
from course.ui import html_table

ENCODER, DECODER = "encoder.weight", "decoder.weight"


def weight_table(columns: dict[str, tuple[dict[str, float], str]]) -> list[dict[str, object]]:
    """One row per weight (encoder, decoder); each column is (history stat by name, format)."""
    return [
        {
            "parameter": name,
            **{label: format(stat[name], fmt) for label, (stat, fmt) in columns.items()},
        }
        for name in (ENCODER, DECODER)
    ]


def grad_table(one: Run) -> list[dict[str, object]]:
    """Gradient statistics per weight: are gradients flowing at all?"""
    h = one.history
    return weight_table(
        {"max |grad|": (h.grad_max, ".3g"), "zero fraction": (h.grad_zero_fraction, ".1%")}
    )


def one_step_moves(optimizer: str, lr: float = 1e-3) -> dict[str, bool]:
    """Take one step with `optimizer` ("manual-sgd", "sgd" or "adam") on the story's model."""
    model = TopKSAE(init="transposed").to(emps.DEVICE)
    before = {n: p.detach().cpu().clone() for n, p in model.named_parameters()}
    batch = dataset().x[:128].to(emps.DEVICE)
    loss = (model(batch) - batch).pow(2).sum(-1).mean()
    loss.backward()
    if optimizer == "manual-sgd":
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
    elif optimizer in ("sgd", "adam"):
        cls = torch.optim.SGD if optimizer == "sgd" else torch.optim.Adam
        cls(model.parameters(), lr=lr).step()
    else:
        raise CourseError(f"optimizer={optimizer!r}; choose manual-sgd, sgd or adam")
    after = dict(model.named_parameters())
    return {n: not torch.equal(after[n].detach().cpu(), before[n]) for n in (ENCODER, DECODER)}


def optimizer_table(lr: float = 1e-3) -> list[dict[str, object]]:
    """Which optimizers move which weights after one step."""
    rows = []
    for name in ("manual-sgd", "sgd", "adam"):
        moved = one_step_moves(name, lr)
        rows.append(
            {"optimizer": name, **{f"{k} moved": "yes" if v else "NO" for k, v in moved.items()}}
        )
    return rows


def adam_state_table(one: Run) -> list[dict[str, object]]:
    """Adam's running moments per weight: exp_avg_sq should never be 0 where gradients flow."""
    h = one.history
    return weight_table(
        {"max exp_avg": (h.exp_avg_max, ".3g"), "max exp_avg_sq": (h.exp_avg_sq_max, ".3g")}
    )


def implied_update(one: Run, lr: float = 3e-3, eps: float = 1e-8) -> float:
    """lr * max exp_avg / (sqrt(max exp_avg_sq) + eps): what Adam *should* have done."""
    h = one.history
    return lr * h.exp_avg_max[ENCODER] / (h.exp_avg_sq_max[ENCODER] ** 0.5 + eps)


def betas_table(betas_list=((0.9, 0.999), (0.9, 0.9), (0.5, 0.0)), steps: int = 40) -> list[dict]:
    """Red herring 1: changing betas (even beta2 = 0) leaves the encoder frozen."""
    rows = []
    for betas in betas_list:
        h = run(steps=steps, betas=betas).history
        rows.append(
            {
                "betas": str(betas),
                "encoder frozen": h.frozen[ENCODER],
                "encoder max exp_avg_sq": h.exp_avg_sq_max[ENCODER],
            }
        )
    return rows


def try_float64_on_device() -> str:
    """Red herring 2: float64 on the (emulated) MPS device is refused, exactly like the real one."""
    model = TopKSAE(init="transposed").double()
    try:
        model.to(emps.DEVICE)
    except TypeError as exc:
        return f"TypeError: {exc}"
    return "no error: this device accepts float64"


def cpu_runs(steps: int = 200) -> dict[str, Run]:
    """float64 on the CPU trains, but so does float32 on the CPU: the device, not the dtype."""
    return {"cpu float32": run(device="cpu", steps=steps), "cpu float64": _float64_run(steps)}


def _float64_run(steps: int) -> Run:
    from course.story.training import train

    model = TopKSAE(init="transposed").double()
    data = dataset()
    data64 = type(data)(x=data.x.double(), features=data.features, codes=data.codes)
    history = train(model, data64, steps=steps, batch_size=128, lr=3e-3)
    return Run(history, "cpu float64 (no emulation)", "transposed", "cpu")


def metadata_table(model: torch.nn.Module) -> str:
    """Encoder vs decoder weight metadata as HTML: the only difference is the layout."""
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
    return html_table(rows, colours={"NO": "#ffd6d6"})
