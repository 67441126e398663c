"""The TopK sparse autoencoder from the story, with its two ways of being initialised.

Shapes follow the story: d_model 384 and 1536 hidden features, so the encoder weight is
[1536, 384] and the decoder weight [384, 1536]. Tying the encoder to the decoder's transpose at
init is common SAE practice; the story wrote it as `decoder.weight.T.clone()`, and because
`clone()` preserves the transposed strides, the encoder weight ends up with stride (1, 1536).

The weights are drawn from a private `torch.Generator`, in the order `nn.Linear` would draw them
after `torch.manual_seed(seed)`: the same values, without touching the learner's global RNG.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from course.errors import require_choice, require_int, require_seed, require_shape

INITS = ("transposed", "contiguous")
MAX_WIDTH = 16_384  # d_model and n_features: far beyond the story's, bounded against typos


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
        require_int("d_model", d_model, 1, MAX_WIDTH)
        require_int("n_features", n_features, 1, MAX_WIDTH)
        require_int("k", k, 1, n_features)
        require_seed(seed)
        require_shape("(n_features, d_model)", (n_features, d_model), dims=2)
        self.k = k
        self.encoder = _linear(d_model, n_features)  # weight (n_features, d_model)
        self.decoder = _linear(n_features, d_model)  # weight (d_model, n_features)
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for layer in (self.encoder, self.decoder):  # nn.Linear's own init, in its order
                bound = 1 / math.sqrt(layer.in_features)
                nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=gen)
                nn.init.uniform_(layer.bias, -bound, bound, generator=gen)
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

    def aux_loss(self, x: torch.Tensor, reconstruction: torch.Tensor) -> torch.Tensor:
        """The auxiliary loss the story also tuned: the next k latents (those TopK dropped)
        try to reconstruct what the top k missed, so latents that never win still get a
        gradient. (A simplified AuxK: the original picks latents that have been dead for long.)
        """
        pre = torch.relu(self.encoder(x - self.decoder.bias))  # (B, n_features)
        width = min(2 * self.k, pre.shape[-1])
        values, indices = pre.topk(width, dim=-1)  # (B, width): top k, then the runners-up
        runners_up = torch.zeros_like(pre).scatter(-1, indices[:, self.k :], values[:, self.k :])
        residual = (x - reconstruction).detach()  # what the top k did not explain
        return (runners_up @ self.decoder.weight.T - residual).pow(2).sum(-1).mean()


def _linear(fan_in: int, fan_out: int) -> nn.Linear:
    """An nn.Linear whose parameters are not yet initialised (no draw from the global RNG)."""
    return nn.utils.skip_init(nn.Linear, fan_in, fan_out)
