"""The models and data of the mystery scenarios: small, seeded, and none of them the story's SAE.

Each model is written the way a user might write it, and each has one habit that gives some
tensor an unusual layout: an orthogonal init taken from QR (column-major), word vectors exported
column by column, channels_last convolutions, q/k/v weights sliced out of one fused checkpoint
tensor, bfloat16 weights, attention heads split with a transpose. Whether that habit matters is
what the case is about.

Every builder takes `(device, generator)`, draws all its numbers from the generator (never from
torch's global RNG), and returns the model on the device.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class Data:
    """A seeded dataset: training inputs/targets and held-out inputs/targets (on the CPU)."""

    x: torch.Tensor
    y: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor


def linear(n_in: int, n_out: int, generator: torch.Generator) -> nn.Linear:
    """An nn.Linear initialised from `generator` (uniform fan-in weights, zero bias)."""
    layer = nn.utils.skip_init(nn.Linear, n_in, n_out)
    bound = n_in**-0.5
    with torch.no_grad():
        layer.weight.uniform_(-bound, bound, generator=generator)
        layer.bias.zero_()
    return layer


def split(x: torch.Tensor, y: torch.Tensor, n_train: int) -> Data:
    """The first n_train samples for training, the rest held out."""
    return Data(x[:n_train], y[:n_train], x[n_train:], y[n_train:])


# --- classification data -------------------------------------------------------------------


def teacher_blobs(generator: torch.Generator, features: int = 10, classes: int = 4) -> Data:
    """Gaussian inputs labelled by a random linear teacher: easy to fit, never trivial."""
    x = torch.randn(384, features, generator=generator)
    teacher = torch.randn(features, classes, generator=generator)
    return split(x, (x @ teacher).argmax(1), 256)


def reviews(generator: torch.Generator, vocab: int = 40, unused: int = 8) -> Data:
    """Bag-of-words counts scored by word sentiment; the last `unused` tokens never occur."""
    words = torch.randint(vocab - unused, (384, 12), generator=generator)
    counts = torch.zeros(384, vocab).scatter_add_(1, words, torch.ones(words.shape))
    sentiment = torch.randn(vocab, generator=generator)
    scores = torch.tanh(counts @ sentiment / 3)
    return split(counts, scores / scores.std(), 256)


def stripes(generator: torch.Generator, n: int = 256, size: int = 8) -> Data:
    """8x8 images of stripes in 4 orientations inside a zero border, with noise."""
    labels = torch.randint(4, (n,), generator=generator)
    rows, cols = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    angle = torch.stack([rows, cols, rows + cols, rows - cols]).float()[labels]
    phase = torch.rand(n, 1, 1, generator=generator) * 6.3
    images = torch.sin(1.6 * angle + phase) + 0.6 * torch.randn(n, size, size, generator=generator)
    images[:, [0, -1], :] = 0.0
    images[:, :, [0, -1]] = 0.0
    return split(images.unsqueeze(1), labels, 128)


# --- regression data: targets from a teacher of the same architecture ----------------------


def teacher_sequences(generator: torch.Generator, build, tokens: int = 6, width: int = 8) -> Data:
    """Random token sequences; each token's target is a randomly initialised teacher's output."""
    x = torch.randn(384, tokens, width, generator=generator)
    teacher = build("cpu", generator)
    with torch.no_grad():
        y = teacher(x)
    return split(x, y / y.std(), 256)


# --- the models ----------------------------------------------------------------------------


class OrthoMLP(nn.Module):
    """A three-layer MLP whose middle layer starts orthogonal (Q from a QR decomposition)."""

    def __init__(self, generator: torch.Generator, features: int = 10, hidden: int = 24) -> None:
        super().__init__()
        self.inp = linear(features, hidden, generator)
        self.mid = linear(hidden, hidden, generator)
        q = torch.linalg.qr(torch.randn(hidden, hidden, generator=generator)).Q
        self.mid.weight = nn.Parameter(q)
        self.out = linear(hidden, 4, generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.relu(self.mid(F.relu(self.inp(x)))))


def build_ortho_mlp(device: str, generator: torch.Generator) -> nn.Module:
    """OrthoMLP on `device`."""
    return OrthoMLP(generator).to(device)


class BagOfWords(nn.Module):
    """Reviews as word counts times pretrained word vectors, then a score."""

    def __init__(self, generator: torch.Generator, vocab: int = 40, dim: int = 16) -> None:
        super().__init__()
        # the vectors come from a tool that exports matrices column by column (Fortran order)
        exported = torch.randn(dim, vocab, generator=generator) * 0.3
        self.vectors = nn.Parameter(exported.T)
        self.head = linear(dim, 1, generator)

    def forward(self, counts: torch.Tensor) -> torch.Tensor:
        return self.head(counts @ self.vectors).squeeze(-1)


def build_bag_of_words(device: str, generator: torch.Generator) -> nn.Module:
    """BagOfWords on `device`."""
    return BagOfWords(generator).to(device)


class BorderCNN(nn.Module):
    """Two 3x3 convolutions in channels_last (fast on GPUs), zeroing the padded border."""

    def __init__(self, generator: torch.Generator, channels: int = 6, size: int = 8) -> None:
        super().__init__()
        self.conv1 = nn.utils.skip_init(nn.Conv2d, 1, channels, 3, padding=1)
        self.conv2 = nn.utils.skip_init(nn.Conv2d, channels, channels, 3, padding=1)
        for conv in (self.conv1, self.conv2):
            bound = (conv.in_channels * 9) ** -0.5
            with torch.no_grad():
                conv.weight.uniform_(-bound, bound, generator=generator)
                conv.bias.zero_()
        self.act = nn.ReLU(inplace=True)
        self.head = linear(channels, 4, generator)
        border = torch.ones(1, 1, size, size, dtype=torch.bool)
        border[..., 1:-1, 1:-1] = False
        self.register_buffer("border", border)
        self.memory_format = torch.channels_last

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.contiguous(memory_format=self.memory_format)
        for conv in (self.conv1, self.conv2):
            h = self.act(conv(h).masked_fill_(self.border, 0.0))
        return self.head(h.mean(dim=(2, 3)))


def build_border_cnn(device: str, generator: torch.Generator) -> nn.Module:
    """BorderCNN on `device`, its weights in channels_last."""
    return BorderCNN(generator).to(device).to(memory_format=torch.channels_last)


class FusedQKV(nn.Module):
    """Single-head attention whose q, k, v weights are slices of one fused checkpoint tensor."""

    def __init__(self, fused: torch.Tensor, generator: torch.Generator) -> None:
        super().__init__()
        width = fused.shape[1]
        # views into the fused tensor: no copy, and the checkpoint stays one tensor
        self.wq = nn.Parameter(fused[:width])
        self.wk = nn.Parameter(fused[width : 2 * width])
        self.wv = nn.Parameter(fused[2 * width :])
        self.head = linear(width, 1, generator).to(fused.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = F.linear(x, self.wq), F.linear(x, self.wk), F.linear(x, self.wv)
        weights = torch.softmax(q @ k.transpose(1, 2) * q.shape[-1] ** -0.5, dim=-1)
        return self.head(weights @ v).squeeze(-1)


def build_fused_qkv(device: str, generator: torch.Generator, width: int = 8) -> nn.Module:
    """FusedQKV on `device` (the fused tensor is created there, then sliced)."""
    fused = (torch.randn(3 * width, width, generator=generator) * width**-0.5).to(device)
    return FusedQKV(fused, generator)


class HalfMLP(nn.Module):
    """A three-layer MLP kept in bfloat16 to halve its memory."""

    def __init__(self, generator: torch.Generator, features: int = 10, hidden: int = 32) -> None:
        super().__init__()
        self.inp = linear(features, hidden, generator)
        self.mid = linear(hidden, hidden, generator)
        self.out = linear(hidden, 4, generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(self.inp.weight.dtype)
        return self.out(F.relu(self.mid(F.relu(self.inp(x))))).float()


def build_half_mlp(device: str, generator: torch.Generator) -> nn.Module:
    """HalfMLP on `device`, in bfloat16."""
    return HalfMLP(generator).to(device, torch.bfloat16)


def split_heads(t: torch.Tensor, heads: int) -> torch.Tensor:
    """(batch, tokens, width) -> (batch, heads, tokens, width // heads), as a view."""
    return t.unflatten(-1, (heads, -1)).transpose(1, 2)


class BiasedHeads(nn.Module):
    """Two-head attention with a learned per-head query bias (Transformer-XL style)."""

    def __init__(self, generator: torch.Generator, width: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = (linear(width, width, generator) for _ in range(3))
        self.query_bias = nn.Parameter(torch.randn(heads, 1, width // heads, generator=generator))
        self.head = linear(width, 1, generator)
        self.split_heads = split_heads

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (self.split_heads(f(x), self.heads) for f in (self.q, self.k, self.v))
        q.add_(self.query_bias).mul_(q.shape[-1] ** -0.5)  # in place: saves a temporary
        weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        mixed = (weights @ v).transpose(1, 2).flatten(2)
        return self.head(mixed).squeeze(-1)


def build_biased_heads(device: str, generator: torch.Generator) -> nn.Module:
    """BiasedHeads on `device`."""
    return BiasedHeads(generator).to(device)
