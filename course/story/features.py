"""Did the SAE learn the features it was meant to find? Ground truth from the synthetic data.

`course.model.data.make_data` builds every sample from known unit directions (`.features`). An SAE
that works should end up with decoder columns pointing along them; so for each true feature we
take the best cosine similarity over all decoder columns. A frozen encoder (the bug) leaves the
model unable to pick directions out; a fixed model recovers most of them.
"""

from __future__ import annotations

import torch
from matplotlib.figure import Figure

from course.errors import CourseError
from course.figures import REFERENCE_LINE, describe, fitted_figure, series_style


def best_cosines(decoder_weight: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
    """For each true feature (row of `features`), the best |cosine| with any decoder column."""
    if decoder_weight.shape[0] != features.shape[1]:
        raise CourseError(
            f"decoder weight {list(decoder_weight.shape)} needs d_model rows to match "
            f"features {list(features.shape)} (n_true, d_model)"
        )
    columns = decoder_weight.detach().cpu().float()  # (d_model, n_features)
    columns = columns / columns.norm(dim=0, keepdim=True).clamp_min(1e-12)
    rows = features / features.norm(dim=1, keepdim=True)  # (n_true, d_model)
    return (rows @ columns).abs().max(dim=1).values  # (n_true,)


def recovered(cosines: torch.Tensor, threshold: float = 0.8) -> float:
    """The fraction of true features found by some decoder column with |cosine| >= threshold."""
    return (cosines >= threshold).double().mean().item()


def recovery_figure(cosines: dict[str, torch.Tensor], threshold: float = 0.8) -> Figure:
    """Histograms of the best cosine per true feature, per model: recovered ones pile up at 1."""
    fig = fitted_figure(640, 290)
    ax = fig.add_subplot()
    bins = torch.linspace(0, 1, 41).tolist()
    for number, (label, values) in enumerate(cosines.items()):
        share = recovered(values, threshold)
        style = series_style(number)  # outlines in each model's line style, not colour alone
        ax.hist(
            values.tolist(),
            bins=bins,
            histtype="step",
            linewidth=1.8,
            color=style["color"],
            linestyle=style["linestyle"],
            label=f"{label}: {share:.0%} recovered",
        )
    ax.axvline(threshold, **REFERENCE_LINE, label=f"threshold {threshold}")
    ax.set(
        xlabel="best |cosine| with a decoder column",
        ylabel="true features",
        title="Ground-truth feature recovery",
    )
    ax.legend()
    return describe(
        fig,
        "Histograms, one outline per model, of each true feature's best cosine with a decoder "
        f"column; features at or above {threshold} count as recovered",
    )
