"""05.custom_op: the reference pair of kernels, and wrong pairs keyed by their flaw."""

from __future__ import annotations

import torch

from tests.corpus import Corpus


def custom_op_reference():
    def my_cpu(avg_sq, grad, beta):
        return beta * avg_sq + (1 - beta) * grad * grad

    def my_fake(avg_sq, grad, beta):
        return torch.empty_like(avg_sq)

    return my_cpu, my_fake


def _formula(a, g, b):
    return b * a + (1 - b) * g * g


def _fresh(a, g, b):
    return torch.empty_like(a)


def _grad_first(a, g, b):  # the fake runs the same expression on meta tensors
    return (1 - b) * g * g + b * a


def _real(cpu):
    """A pair whose CPU kernel is `cpu`, with the right fake kernel."""
    return lambda: (cpu, _fresh)


def _fake(fake, cpu=_formula):
    """A pair whose fake kernel is `fake` (beside a right CPU kernel, or `cpu`)."""
    return lambda: (cpu, fake)


CORPORA = (
    Corpus(
        "05.custom_op",
        custom_op_reference,
        wrong={
            "mul_/addcmul_ on avg_sq": (
                _real(lambda a, g, b: a.mul_(b).addcmul_(g, g, value=1 - b)),
                "wrote into its input avg_sq",
            ),
            "mul_ on grad": (
                _real(lambda a, g, b: g.mul_(g).mul_(1 - b).add_(b * a)),
                "wrote into its input grad",
            ),
            "grad**2 not weighted": (
                _real(lambda a, g, b: b * a + g * g),
                "not weighted by (1 - beta)",
            ),
            "beta 0.9 written in": (
                _real(lambda a, g, b: 0.9 * a + 0.1 * g * g),
                "beta = 0.9 whatever beta is",
            ),
            "a row-major fake, the real keeps avg_sq's layout": (
                _fake(lambda a, g, b: a.new_empty(a.shape)),
                "allocate it like avg_sq",
            ),
            "a .contiguous() in the real kernel": (
                _real(lambda a, g, b: _formula(a, g, b).contiguous()),
                "row-major on every input",
            ),
            "grad's term first": (
                _real(lambda a, g, b: (1 - b) * g * g + b * a),
                "puts grad's term first",
            ),
            "the fake returns avg_sq": (
                _fake(lambda a, g, b: a),
                "returned its input avg_sq itself",
            ),
            "a float32 fake": (
                _fake(
                    lambda a, g, b: torch.empty(a.shape, device=a.device),
                    cpu=lambda a, g, b: _formula(a, g, b).contiguous(),
                ),
                "promises torch.float32, the real output is torch.float64",
            ),
            "the fake copies a slice's strides": (
                _fake(lambda a, g, b: a.new_empty_strided(a.shape, a.stride())),
                "gaps between rows included",
            ),
            "the fake allocates like grad": (
                _fake(lambda a, g, b: torch.empty_like(g)),
                "allocates like grad",
            ),
            "the fake allocates on the CPU": (
                _fake(lambda a, g, b: torch.empty_like(a, device="cpu")),
                "allocates where its inputs are",
            ),
            "the fake returns view_as": (
                _fake(lambda a, g, b: a.view_as(a)),
                "returned a view of its input avg_sq",
            ),
            "the fake returns a[...]": (
                _fake(lambda a, g, b: a[...]),
                "returned a view of its input avg_sq",
            ),
            "the fake returns a.detach()": (
                _fake(lambda a, g, b: a.detach()),
                "returned a view of its input avg_sq",
            ),
            "beta and 1 - beta swapped": (
                _real(lambda a, g, b: (1 - b) * a + b * g * g),
                "beta and (1 - beta) are swapped",
            ),
            "lerp(grad**2, avg_sq, beta)": (  # right values, grad's layout
                _real(lambda a, g, b: torch.lerp(g * g, a, b)),
                "puts grad's term first",
            ),
            "in place on avg_sq.contiguous()": (  # avg_sq itself when it is contiguous
                _real(lambda a, g, b: a.contiguous().mul_(b).addcmul_(g, g, value=1 - b)),
                "wrote into its input avg_sq",
            ),
            "beta 0.999 written in": (
                _real(lambda a, g, b: 0.999 * a + 0.001 * g * g),
                "beta = 0.999 whatever beta is",
            ),
            "an explicitly row-major fake": (
                _fake(lambda a, g, b: torch.empty_like(a, memory_format=torch.contiguous_format)),
                "allocate it like avg_sq",
            ),
            ".float() in the real kernel": (
                _real(lambda a, g, b: _formula(a, g, b).float()),
                "returns torch.float32 for torch.float64",
            ),
            "float32 arithmetic, cast back": (
                _real(lambda a, g, b: _formula(a.float(), g.float(), b).to(a.dtype)),
                "computes in float32 and returns torch.float64",
            ),
        },
        right={
            "grad's term first in both kernels": lambda: (_grad_first, _grad_first),
            "row-major in both kernels": lambda: (
                lambda a, g, b: _formula(a, g, b).contiguous(),
                lambda a, g, b: a.new_empty(a.shape),
            ),
            "lerp": _real(lambda a, g, b: torch.lerp(a, g * g, 1 - b)),
            "addcmul": _real(lambda a, g, b: torch.addcmul(b * a, g, g, value=1 - b)),
            "computed in float64": _real(
                lambda a, g, b: (b * a.double() + (1 - b) * g.double() ** 2).to(a.dtype)
            ),
        },
    ),
)
