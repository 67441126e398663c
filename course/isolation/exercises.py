"""Notebook 02's exercises, checked on hidden variants of the isolation experiments."""

from __future__ import annotations

import torch

from course.exercises import Exercise, failed, passed, register
from course.story.sae import TopKSAE

# Exercises ---------------------------------------------------------------------------------


def _check_did_not_move(fn) -> object:
    w = torch.randn(6, 4)
    cases = [
        ("an identical copy", w, w.clone(), True),
        ("one element moved to the next float32 value", w, _nudged(w, 0.0), False),
        ("a change of 0.5 in one element", w, _nudged(w, 0.5), False),
        ("the same values with a transposed layout", w, w.t().contiguous().t(), True),
    ]
    for what, before, after, expected in cases:
        got = fn(before, after)
        if not isinstance(got, bool):
            return failed(f"return a bool (True = did not move); for {what} you returned {got!r}")
        if got != expected:
            return failed(f"wrong for {what}", got, expected)
    return passed("exact equality, whatever the layout: that is what 'frozen' means.")


def _nudged(w: torch.Tensor, amount: float) -> torch.Tensor:
    out = w.clone()
    out[2, 3] = torch.nextafter(out[2, 3], torch.tensor(float("inf"))) + amount
    return out


def _reference_did_not_move():
    def did_not_move(before, after):
        return torch.equal(before, after)

    return did_not_move


register(
    Exercise(
        name="02.did_not_move",
        prompt="Write did_not_move(before, after) -> bool: True only if no element changed at all.",
        checker=_check_did_not_move,
        hint="'Close' is not 'equal': allclose hides a one-ulp change. Use an exact comparison.",
        reference=_reference_did_not_move,
        wrong_answers=(
            lambda: lambda before, after: torch.allclose(before, after),
            lambda: lambda before, after: bool((after - before).abs().max() < 1e-6),
            lambda: lambda before, after: before.stride() == after.stride(),
        ),
    )
)

_PROPERTIES = ("device", "dtype", "shape", "stride", "is_contiguous", "requires_grad")


def _check_property(answer: object) -> object:
    enc = TopKSAE(init="transposed").encoder.weight
    fresh = torch.zeros(enc.shape, requires_grad=True)  # what a newly allocated weight looks like
    name = str(answer).strip().removesuffix("()").removeprefix(".")
    if name not in _PROPERTIES:
        return failed(f"{answer!r} is not a property we compare here; try one of {_PROPERTIES}")
    values = [getattr(t, name) for t in (enc, fresh)]
    values = [v() if callable(v) else v for v in values]
    if values[0] == values[1]:
        return failed(f"{name} is {values[0]} for both the encoder weight and a fresh tensor")
    return passed(f"{name}: {values[0]} for the encoder vs {values[1]} for a fresh tensor")


def _reference_property():
    return "stride"


register(
    Exercise(
        name="02.differing_property",
        prompt="Name the tensor property that differs between encoder.weight and a freshly "
        "allocated tensor of the same shape (torch.zeros(1536, 384, requires_grad=True)).",
        checker=_check_property,
        hint="Values, shape, dtype and device all match. Print .stride() and .is_contiguous().",
        reference=_reference_property,
        wrong_answers=(lambda: "shape", lambda: "dtype", lambda: "device"),
    )
)
