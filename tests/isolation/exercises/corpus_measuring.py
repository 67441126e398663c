"""02.did_not_move and 02.grad_check: the notebook's answers, and the shortcuts each must name."""

from __future__ import annotations

import torch

from tests.corpus import Corpus


def _did_not_move():
    def did_not_move(before, after):
        return torch.equal(before.cpu(), after.cpu())

    return did_not_move


did_not_move = _did_not_move()  # the notebook's name: later references call it


def _grad_check():
    def grad_check(grad):
        return grad.abs().max().item(), (grad == 0).float().mean().item()

    return grad_check


def _isclose(rtol: float, atol: float):
    return lambda before, after: bool(
        torch.isclose(before.cpu(), after.cpu(), rtol=rtol, atol=atol).all()
    )


def _zeros(fraction):
    """max |grad| right, the zero fraction computed by `fraction`."""
    return lambda g: (g.abs().max().item(), fraction(g))


def _largest(read):
    """The zero fraction right, max |grad| computed by `read`."""
    return lambda g: (read(g).item(), (g == 0).float().mean().item())


CORPORA = (
    Corpus(
        "02.did_not_move",
        _did_not_move,
        wrong={
            "allclose": (
                lambda: lambda before, after: torch.allclose(before.cpu(), after.cpu()),
                "one-ulp change",
            ),
            "max |diff| < 1e-6": (
                lambda: lambda before, after: bool((after.cpu() - before).abs().max() < 1e-6),
                "one-ulp change",
            ),
            "compares strides": (
                lambda: lambda before, after: before.stride() == after.stride(),
                "without comparing the values",
            ),
            "identity": (lambda: lambda before, after: before is after, "not identity"),
            "compares sums": (
                lambda: lambda before, after: bool(before.sum() == after.cpu().sum()),
                "moved to other places",
            ),
            "the first element only": (
                lambda: lambda before, after: bool(before[0, 0] == after.cpu()[0, 0]),
                "compare every element",
            ),
            "no |diff| > 0": (
                lambda: lambda before, after: not bool(((after.cpu() - before).abs() > 0).any()),
                "NaN garbage",
            ),
            "torch.equal across devices": (
                lambda: lambda before, after: torch.equal(before, after),
                "bring both to the CPU",
            ),
            "the first 1000 elements": (
                lambda: (
                    lambda before, after: torch.equal(
                        before.cpu().flatten()[:1000], after.cpu().flatten()[:1000]
                    )
                ),
                "not the first rows or the first thousand",
            ),
            "compares |values|": (
                lambda: lambda before, after: torch.equal(before.cpu().abs(), after.cpu().abs()),
                "(abs) are the same",
            ),
            "column sums": (
                lambda: lambda before, after: torch.equal(before.cpu().sum(0), after.cpu().sum(0)),
                "along rows or columns",
            ),
            "isclose with atol 1e-7": (lambda: _isclose(0, 1e-7), "every threshold"),
            "compared in float16": (
                lambda: lambda before, after: torch.equal(before.half(), after.cpu().half()),
                "a lower precision",
            ),
            "only `after` on the CPU": (
                lambda: lambda before, after: torch.equal(before, after.cpu()),
                "either side may live on the device",
            ),
            "always True": (lambda: lambda before, after: True, "without comparing the values"),
            "subtracts into `before`": (
                lambda: lambda before, after: bool((before.cpu().sub_(after.cpu()) == 0).all()),
                "changed its inputs",
            ),
            "isclose with rtol 1e-9": (lambda: _isclose(1e-9, 0), "however small"),
            "nan_to_num on both sides": (
                lambda: (
                    lambda before, after: torch.equal(
                        before.cpu().nan_to_num(), after.cpu().nan_to_num()
                    )
                ),
                "nan_to_num turns it back",
            ),
            "compared as float32": (
                lambda: (
                    lambda before, after: torch.equal(before.cpu().float(), after.cpu().float())
                ),
                "a cast to float32",
            ),
        },
        right={
            "after first, moved with .to": lambda: (
                lambda before, after: torch.equal(after.to("cpu"), before.to("cpu"))
            ),
            "bytes compared on the CPU": lambda: (
                lambda before, after: (
                    before.dtype == after.dtype
                    and before.shape == after.shape
                    and before.cpu().contiguous().view(torch.uint8).tolist()
                    == after.cpu().contiguous().view(torch.uint8).tolist()
                )
            ),
        },
    ),
    Corpus(
        "02.grad_check",
        _grad_check,
        wrong={
            "no abs": (lambda: _largest(torch.max), "largest signed value"),
            "zero as |g| < 1e-8": (
                lambda: _zeros(lambda g: (g.abs() < 1e-8).float().mean().item()),
                "1e-12 is not 0",
            ),
            "a count of zeros": (
                lambda: _zeros(lambda g: (g == 0).sum().item()),
                "number of zeros",
            ),
            "the non-zero fraction": (
                lambda: _zeros(lambda g: g.count_nonzero().item() / g.numel()),
                "NON-zero",
            ),
            "the first row's max": (
                lambda: _largest(lambda g: g[0].abs().max()),
                "first row's largest",
            ),
            "a mean magnitude": (lambda: _largest(lambda g: g.abs().mean()), "mean magnitude"),
            "the fraction of zero rows": (
                lambda: _zeros(lambda g: (g == 0).all(1).float().mean().item()),
                "rows that are all zero",
            ),
            "zero as |g| < finfo.tiny": (
                lambda: _zeros(
                    lambda g: (g.abs() < torch.finfo(g.dtype).tiny).float().mean().item()
                ),
                "1e-40 is not 0",
            ),
            "a norm": (lambda: _largest(torch.norm), "the norm"),
            "divided by len": (
                lambda: _zeros(lambda g: (g == 0).sum().item() / len(g)),
                "number of rows (len)",
            ),
            "a percentage": (
                lambda: _zeros(lambda g: 100 * (g == 0).float().mean().item()),
                "a percentage",
            ),
            "the printed pair": (
                lambda: lambda g: (0.04265913367271423, 0.1087239608168602),
                "copied from a printed output",
            ),
            "the fraction of zero columns": (
                lambda: _zeros(lambda g: (g == 0).all(0).float().mean().item()),
                "columns that are all zero",
            ),
            "the first column's max": (
                lambda: _largest(lambda g: g[:, 0].abs().max()),
                "first column's largest",
            ),
            "min instead of max": (
                lambda: _largest(lambda g: g.abs().min()),
                "the smallest magnitude",
            ),
            "the pair reversed": (
                lambda: lambda g: ((g == 0).float().mean().item(), g.abs().max().item()),
                "in the wrong order",
            ),
            "the first row's zeros": (
                lambda: _zeros(lambda g: (g[0] == 0).float().mean().item()),
                "first row's zero fraction",
            ),
            "zeros counted in float16": (
                lambda: _zeros(lambda g: (g.half() == 0).float().mean().item()),
                "too small for float16",
            ),
            "g <= 0": (
                lambda: _zeros(lambda g: (g <= 0).float().mean().item()),
                "negative values too",
            ),
            "rows holding a zero": (
                lambda: _zeros(lambda g: (g == 0).any(1).float().mean().item()),
                "rows with a zero in them",
            ),
        },
        right={
            "a list": lambda: (
                lambda grad: [
                    grad.abs().max().item(),
                    (grad == 0).float().mean().item(),
                ]
            ),
            "tensors": lambda: lambda grad: (grad.abs().amax(), grad.eq(0).sum() / grad.numel()),
            "numpy": lambda: (
                lambda grad: (
                    float(grad.detach().cpu().numpy().__abs__().max()),
                    float((grad.detach().cpu().numpy() == 0).mean()),
                )
            ),
        },
    ),
)
