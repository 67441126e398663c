"""How the story's encoder got stride (1, 1536), and how Adam's state inherited it.

Notebook 04 shows the model's own tensors, step by step from the tied init through one Adam step,
as table rows: which are views, which are copies, and which kept the transposed strides. The rows
come from `layout_row`, which the stride lessons also use for tensors of their own.
"""

from __future__ import annotations

import torch

from course.model.sae import TopKSAE


def layout_row(
    what: str, tensor: torch.Tensor, base: torch.Tensor | None = None
) -> dict[str, object]:
    """One table row: a tensor's layout, and whether it shares storage with `base`."""
    row = {
        "tensor": what,
        "shape": tuple(tensor.shape),
        "stride": tensor.stride(),
        "contiguous": tensor.is_contiguous(),
        "storage": "-",
    }
    if tensor.dim() == 4:
        row["channels_last"] = tensor.is_contiguous(memory_format=torch.channels_last)
    if base is tensor:
        row["storage"] = "the original"
    elif base is not None:
        same = tensor.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
        row["storage"] = "shared (a view)" if same else "new (a copy)"
    return row


def encoder_layouts(d_model: int = 384, n_features: int = 1536) -> list[dict[str, object]]:
    """The story's init and one Adam step, tensor by tensor: who is non-contiguous and why."""
    model = TopKSAE(d_model, n_features, k=min(32, n_features), init="transposed", seed=0)
    decoder = model.decoder.weight.detach()
    encoder = model.encoder.weight
    x = torch.randn(8, d_model, generator=torch.Generator().manual_seed(0))
    (model(x) - x).pow(2).mean().backward()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    optimizer.step()
    state = optimizer.state[encoder]
    return [
        layout_row("decoder.weight", decoder, decoder),
        layout_row("decoder.weight.T", decoder.T, decoder),
        layout_row("decoder.weight.T.clone()", decoder.T.clone(), decoder),
        layout_row(
            "...clone(memory_format=contiguous_format)",
            decoder.T.clone(memory_format=torch.contiguous_format),
            decoder,
        ),
        layout_row("decoder.weight.T.contiguous()", decoder.T.contiguous(), decoder),
        layout_row("encoder.weight (the story's init)", encoder.detach(), decoder),
        layout_row("encoder.weight.grad", encoder.grad),
        layout_row("Adam state['exp_avg']", state["exp_avg"]),
        layout_row("Adam state['exp_avg_sq']", state["exp_avg_sq"]),
        layout_row("torch.zeros_like(encoder.weight)", torch.zeros_like(encoder)),
        layout_row("torch.zeros(encoder.weight.shape)", torch.zeros(encoder.shape)),
    ]
