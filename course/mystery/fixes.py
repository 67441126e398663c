"""Reference fixes: patches that take a freshly built scenario model and return it fixed.

A patch changes where the troublesome layout comes from (a parameter made contiguous at init, a
slice given its own storage, an activation computed out of place) and keeps the model otherwise
the same, so the scenario trains on the buggy device as it does on a healthy one.
"""

from __future__ import annotations

import torch
from torch import nn

from course.mystery.models import split_heads


def contiguous_middle(model: nn.Module) -> nn.Module:
    """Store the QR-initialised middle weight row by row."""
    model.mid.weight = nn.Parameter(model.mid.weight.detach().contiguous())
    return model


def contiguous_vectors(model: nn.Module) -> nn.Module:
    """Store the exported word vectors row by row."""
    model.vectors = nn.Parameter(model.vectors.detach().contiguous())
    return model


def contiguous_format(model: nn.Module) -> nn.Module:
    """Give up channels_last: weights and activations in the default memory format."""
    model.memory_format = torch.contiguous_format
    return model.to(memory_format=torch.contiguous_format)


def out_of_place_relu(model: nn.Module) -> nn.Module:
    """Let ReLU write a new tensor instead of overwriting the convolution's output."""
    model.act = nn.ReLU()
    return model


def own_storage(model: nn.Module) -> nn.Module:
    """Give q, k and v weights storage of their own instead of views into the fused tensor."""
    for name in ("wq", "wk", "wv"):
        setattr(model, name, nn.Parameter(getattr(model, name).detach().clone()))
    return model


def float32_weights(model: nn.Module) -> nn.Module:
    """Keep the weights in float32 (the forward pass casts its input to the weights' dtype)."""
    return model.float()


def contiguous_heads(model: nn.Module) -> nn.Module:
    """Split heads into a contiguous copy, so the in-place bias and scale write a plain tensor."""
    model.split_heads = lambda t, heads: split_heads(t, heads).contiguous()
    return model
