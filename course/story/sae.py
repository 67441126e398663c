"""The TopK sparse autoencoder from the story, with its two ways of being initialised.

Shapes follow the story: d_model 384 and 1536 hidden features, so the encoder weight is
[1536, 384] and the decoder weight [384, 1536]. Tying the encoder to the decoder's transpose at
init is common SAE practice; the story wrote it as `decoder.weight.T.clone()`, and because
`clone()` preserves the transposed strides, the encoder weight ends up with stride (1, 1536).
"""

from __future__ import annotations

import torch
from torch import nn

from course.errors import require_choice

INITS = ("transposed", "contiguous")


class TopKSAE(nn.Module):
    """encoder -> keep the k largest (ReLU) activations -> decoder."""

    def __init__(
        self,
        d_model: int = 384,
        n_features: int = 1536,
        k: int = 32,
        init: str = "transposed",
        seed: int = 0,
    ) -> None:
        super().__init__()
        require_choice("init", init, INITS)
        if not 0 < k <= n_features:
            raise ValueError(f"k={k} must be between 1 and n_features={n_features}")
        self.k = k
        torch.manual_seed(seed)
        self.encoder = nn.Linear(d_model, n_features)  # weight (n_features, d_model)
        self.decoder = nn.Linear(n_features, d_model)  # weight (d_model, n_features)
        with torch.no_grad():
            self.decoder.weight /= self.decoder.weight.norm(dim=0, keepdim=True)
            self.decoder.bias.zero_()
            self.encoder.bias.zero_()
        tied = self.decoder.weight.T.clone()  # stride (1, n_features): clone keeps the layout
        self.encoder.weight.data = tied if init == "transposed" else tied.contiguous()

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Sparse codes: all but the k largest pre-activations (after ReLU) set to zero."""
        pre = torch.relu(self.encoder(x - self.decoder.bias))  # (B, n_features)
        values, indices = pre.topk(self.k, dim=-1)  # (B, k)
        return torch.zeros_like(pre).scatter(-1, indices, values)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encode(x))  # (B, d_model)
