"""The user code of the mystery cases: four small models, their data, and the habits users have.

Each model is written the way a user might write it, and keeps its training recipe with it (as
nanoGPT's `configure_optimizers` does), so a fix may change the recipe as well as the layers.
A case's build (course.mystery.families) constructs one of these models and may add a *habit*
that gives some tensor an unusual property: weights read from another framework's checkpoint,
a packed checkpoint or a wider layer, a smaller dtype, in-place activations, a causal mask filled
in place. Whether a habit matters is what the case is about.

Note [The user's code does not name the trigger]
    A user rarely writes the property a kernel trips over: it comes with a habit (a Flax or
    TFLite checkpoint whose layout differs from PyTorch's, a packed file, autocast's dtype).
    The helpers are named and documented as their user would name them, after where the
    weights come from, so the property is found by looking at the tensors (strides, storage
    offset, dtype) at run time; tests/mystery/test_models.py checks, for a sample of the cases
    of each such habit, that the code spells no condition of the case.

Every builder draws all its numbers from a `torch.Generator` (never from torch's global RNG).
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


def split(x: torch.Tensor, y: torch.Tensor, n_train: int) -> Data:
    """The first n_train samples for training, the rest held out."""
    return Data(x[:n_train], y[:n_train], x[n_train:], y[n_train:])


def linear(n_in: int, n_out: int, generator: torch.Generator) -> nn.Linear:
    """An nn.Linear initialised from `generator` (uniform fan-in weights, zero bias)."""
    layer = nn.utils.skip_init(nn.Linear, n_in, n_out)
    bound = n_in**-0.5
    with torch.no_grad():
        layer.weight.uniform_(-bound, bound, generator=generator)
        layer.bias.zero_()
    return layer


# --- the training recipe every model carries --------------------------------------------------


class Trainable(nn.Module):
    """A model that knows how it is trained: optimizer, learning rate, and its options."""

    def __init__(
        self,
        optimizer: str = "Adam",
        lr: float = 1e-2,
        weight_decay: float = 0.0,
        eps: float = 1e-8,
        foreach: bool = False,
    ) -> None:
        super().__init__()
        self.optimizer, self.lr, self.weight_decay = optimizer, lr, weight_decay
        self.eps, self.foreach, self.fused = eps, foreach, False

    def configure_optimizer(self) -> torch.optim.Optimizer:
        """The optimizer this model trains with (fused=True takes precedence over foreach)."""
        options = {"lr": self.lr, "weight_decay": self.weight_decay, "eps": self.eps}
        if self.fused:
            options["fused"] = True
        else:
            options["foreach"] = self.foreach
        return getattr(torch.optim, self.optimizer)(self.parameters(), **options)


# --- the models -------------------------------------------------------------------------------


class MLP(Trainable):
    """A classifier: Linear layers with ReLU between them (sizes: inputs, hidden..., classes)."""

    def __init__(
        self,
        generator: torch.Generator,
        sizes: tuple[int, ...],
        inplace: bool = False,
        **recipe,
    ) -> None:
        super().__init__(**recipe)
        pairs = zip(sizes[:-1], sizes[1:], strict=True)
        self.layers = nn.ModuleList(linear(n_in, n_out, generator) for n_in, n_out in pairs)
        self.act = nn.ReLU(inplace=inplace)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(self.layers[0].weight.dtype)  # the weights' dtype decides the compute dtype
        for layer in self.layers[:-1]:
            x = self.act(layer(x))
        return self.layers[-1](x).float()


class ConvNet(Trainable):
    """Two 3x3 convolutions over small images, the padded border zeroed, then a linear head."""

    def __init__(
        self,
        generator: torch.Generator,
        channels: tuple[int, int],
        size: int,
        classes: int = 4,
        inplace: bool = False,
        clip: float = 0.0,
        **recipe,
    ) -> None:
        super().__init__(**recipe)
        self.conv1 = nn.utils.skip_init(nn.Conv2d, 1, channels[0], 3, padding=1)
        self.conv2 = nn.utils.skip_init(nn.Conv2d, channels[0], channels[1], 3, padding=1)
        for conv in (self.conv1, self.conv2):
            bound = (conv.in_channels * 9) ** -0.5
            with torch.no_grad():
                conv.weight.uniform_(-bound, bound, generator=generator)
                conv.bias.zero_()
        self.act = nn.ReLU(inplace=inplace)
        self.head = linear(channels[1], classes, generator)
        border = torch.ones(1, 1, size, size, dtype=torch.bool)
        border[..., 1:-1, 1:-1] = False
        self.register_buffer("border", border)
        self.clip = clip  # 0: no clipping

    def mask_border(self, h: torch.Tensor) -> torch.Tensor:
        """Zero the padded border of each feature map, in place."""
        return h.masked_fill_(self.border, 0.0)

    def clip_activations(self, h: torch.Tensor) -> torch.Tensor:
        """Keep activations within [-clip, clip], in place (for stability)."""
        return h.clamp_(-self.clip, self.clip) if self.clip else h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.to(self.conv1.weight.dtype)
        for conv in (self.conv1, self.conv2):
            h = self.act(self.clip_activations(self.mask_border(conv(h))))
        return self.head(h.mean(dim=(2, 3))).float()


def split_heads(t: torch.Tensor, heads: int) -> torch.Tensor:
    """(batch, tokens, width) -> (batch, heads, tokens, width // heads), as a view."""
    return t.unflatten(-1, (heads, -1)).transpose(1, 2)


class Attention(Trainable):
    """Causal multi-head self-attention over token sequences, one score per token."""

    def __init__(
        self,
        generator: torch.Generator,
        width: int,
        heads: int,
        tokens: int,
        query_bias: bool = False,
        softcap: float = 0.0,
        **recipe,
    ) -> None:
        super().__init__(**recipe)
        self.heads, self.softcap = heads, softcap
        scale = width**-0.5
        self.wq, self.wk, self.wv = (
            nn.Parameter(torch.randn(width, width, generator=generator) * scale) for _ in range(3)
        )
        bias = torch.randn(heads, 1, width // heads, generator=generator) * 0.5
        self.query_bias = nn.Parameter(bias) if query_bias else None
        self.head = linear(width, 1, generator)
        self.register_buffer("future", torch.ones(tokens, tokens, dtype=torch.bool).triu(1))

    def add_query_bias(self, q: torch.Tensor) -> torch.Tensor:
        """A learned bias per head, added to the queries in place (Transformer-XL style)."""
        return q.add_(self.query_bias)

    def scale(self, q: torch.Tensor) -> torch.Tensor:
        """Queries scaled by 1/sqrt(head width), in place: saves a temporary."""
        return q.mul_(q.shape[-1] ** -0.5)

    def cap(self, scores: torch.Tensor) -> torch.Tensor:
        """Scores kept within [-softcap, softcap], in place."""
        return scores.clamp_(-self.softcap, self.softcap)

    def mask_future(self, scores: torch.Tensor) -> torch.Tensor:
        """No token attends to later tokens: their scores become -1e9, in place."""
        return scores.masked_fill_(self.future, -1e9)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(self.wq.dtype)
        q, k, v = (split_heads(F.linear(x, w), self.heads) for w in (self.wq, self.wk, self.wv))
        if self.query_bias is not None:
            q = self.add_query_bias(q)
        scores = self.scale(q) @ k.transpose(-2, -1)  # (batch, heads, tokens, tokens)
        if self.softcap:
            scores = self.cap(scores)
        weights = torch.softmax(self.mask_future(scores), dim=-1)
        mixed = (weights @ v).transpose(1, 2).flatten(2)  # (batch, tokens, width)
        return self.head(mixed).squeeze(-1).float()


class BagOfWords(Trainable):
    """Reviews as word counts times word vectors, then a score."""

    def __init__(self, generator: torch.Generator, vocab: int, dim: int, **recipe) -> None:
        super().__init__(**recipe)
        self.vectors = nn.Parameter(torch.randn(vocab, dim, generator=generator) * 0.3)
        self.head = linear(dim, 1, generator)

    def forward(self, counts: torch.Tensor) -> torch.Tensor:
        return self.head(counts.to(self.vectors.dtype) @ self.vectors).squeeze(-1).float()


# --- the habits: what users do to their weights once the model is on its device --------------


def load_flax(shape: tuple[int, int], generator: torch.Generator, device) -> nn.Parameter:
    """A weight from a Flax checkpoint: Flax's Dense kernels are stored (in, out)."""
    exported = torch.randn(shape[1], shape[0], generator=generator) * shape[1] ** -0.5
    return nn.Parameter(exported.to(device).T)


def keep_even_inputs(shape: tuple[int, int], generator: torch.Generator, device) -> nn.Parameter:
    """A weight cut from a layer trained on twice the inputs, keeping the even-numbered ones."""
    wide = torch.randn(shape[0], 2 * shape[1], generator=generator) * shape[1] ** -0.5
    return nn.Parameter(wide.to(device)[:, ::2])


def load_packed(model: nn.Module, names: tuple[str, ...]) -> None:
    """Load the named weights from a packed checkpoint: one array holds them all, end to end."""
    params = [model.get_parameter(name) for name in names]
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    start = 0
    for name, param in zip(names, params, strict=True):
        view = flat[start : start + param.numel()].view(param.shape)
        owner, _, attribute = name.rpartition(".")
        setattr(model.get_submodule(owner), attribute, nn.Parameter(view))
        start += param.numel()


def load_tflite(model: nn.Module) -> None:
    """Replace each convolution's weight by the same numbers read from a TFLite export, whose
    convolution kernels are stored (out, height, width, in)."""
    for conv in (m for m in model.modules() if isinstance(m, nn.Conv2d)):
        exported = conv.weight.detach().permute(0, 2, 3, 1).contiguous()  # as the file holds it
        conv.weight = nn.Parameter(exported.permute(0, 3, 1, 2))  # back to (out, in, h, w)


def compact(model: nn.Module) -> nn.Module:
    """The model in the dtype torch's CPU autocast computes in: half the memory of float32."""
    return model.to(torch.get_autocast_dtype("cpu"))


# --- data ---------------------------------------------------------------------------------------


def teacher_blobs(
    generator: torch.Generator, n: int, features: int, classes: int, unused: int = 0
) -> Data:
    """Gaussian inputs labelled by a random one-hidden-layer ReLU teacher (3/4 for training);
    the last `unused` features are always 0 (slots kept for later data)."""
    x = torch.randn(n, features, generator=generator)
    x[:, features - unused :] = 0.0
    hidden = torch.randn(features, 2 * features, generator=generator)
    teacher = torch.randn(2 * features, classes, generator=generator)
    return split(x, ((x @ hidden).relu() @ teacher).argmax(1), 3 * n // 4)


def reviews(generator: torch.Generator, n: int, vocab: int, unused: int) -> Data:
    """Bag-of-words counts scored by word sentiment; the last `unused` words never occur."""
    words = torch.randint(vocab - unused, (n, 12), generator=generator)
    counts = torch.zeros(n, vocab).scatter_add_(1, words, torch.ones(words.shape))
    sentiment = torch.randn(vocab, generator=generator)
    scores = torch.tanh(counts @ sentiment / 3)
    return split(counts, scores / scores.std(), 3 * n // 4)


def stripes(generator: torch.Generator, n: int, size: int) -> Data:
    """Images of noisy stripes in 4 orientations inside a zero border (half for training)."""
    labels = torch.randint(4, (n,), generator=generator)
    rows, cols = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    angle = torch.stack([rows, cols, rows + cols, rows - cols]).float()[labels]
    phase = torch.rand(n, 1, 1, generator=generator) * 6.3
    images = torch.sin(1.6 * angle + phase) + 0.6 * torch.randn(n, size, size, generator=generator)
    images[:, [0, -1], :] = 0.0
    images[:, :, [0, -1]] = 0.0
    return split(images.unsqueeze(1), labels, n // 2)


def teacher_sequences(generator: torch.Generator, n: int, teacher: nn.Module, width: int) -> Data:
    """Random token sequences; each token's target is a teacher network's output."""
    tokens = teacher.future.shape[0]
    x = torch.randn(n, tokens, width, generator=generator)
    with torch.no_grad():
        y = teacher(x)
    return split(x, y / y.std(), 3 * n // 4)
