"""02.differences: the metadata in which two tensors differ, on pairs that each defeat a shortcut
(the same values stored another way, an unused stride, a storage offset, a narrower view)."""

from __future__ import annotations

import torch

from course import emps
from course.exercises import Exercise, Verdict, failed, register
from course.exercises.engine import Checking, Trial, each
from course.isolation.exercises.common import SMALL
from course.isolation.experiments import bench
from course.layout.named import laid_out

PROPERTIES = ("device", "dtype", "shape", "stride", "is_contiguous")


def _pairs() -> list[tuple[str, torch.Tensor, torch.Tensor, str]]:
    """(what, a, b, what the pair shows): each pair defeats one shortcut."""
    story = bench(**SMALL).model
    enc, dec = story.encoder.weight.detach(), story.decoder.weight.detach()
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(3))
    row = torch.randn(1, 4, generator=torch.Generator().manual_seed(4))
    return [
        (
            "the encoder weight and a contiguous copy of it",
            enc,
            enc.contiguous(),
            "the same values and shape, stored another way: only metadata tells them apart",
        ),
        (
            "the encoder and decoder weights",
            enc,
            dec,
            "the decoder is the encoder's transpose: another shape and other strides",
        ),
        ("a tensor and its exact clone", x, x.clone(), "a clone keeps every property"),
        ("a tensor and its float64 copy", x, x.double(), "only the dtype differs"),
        (
            "a tensor and its int32 copy",
            x,
            x.int(),
            "only the dtype differs, though both take 4 bytes an element: compare dtypes",
        ),
        (
            "a tensor on the CPU and its copy on the emulated device",
            x,
            x.to(emps.DEVICE),
            "only the device differs",
        ),
        (
            "a tensor and the same values every other column",
            x,
            laid_out(x, "step-sliced"),
            "gaps in memory: other strides, and not contiguous",
        ),
        (
            "a tensor and the same values 7 elements into a storage",
            x,
            laid_out(x, "storage-offset"),
            "an offset into a storage changes neither the strides nor contiguity",
        ),
        (
            "a one-row tensor and the same row read with another (unused) stride",
            row,
            row.as_strided((1, 4), (1, 1)),
            "a dimension of size 1 never uses its stride: other strides, yet both contiguous, "
            "so ask is_contiguous() on its own",
        ),
        (
            "a tensor and its first three rows",
            x,
            x[:3],
            "only the first dimension differs: compare the whole shape, not one size of it",
        ),
        (
            "a tensor and its first three columns",
            x,
            x[:, :3],
            "the same strides, (4, 1), yet the view skips the last element of every row: the "
            "last stride 1 does not make a tensor contiguous, so ask is_contiguous()",
        ),
    ]


def _metadata(t: torch.Tensor) -> tuple:
    return t.device, t.dtype, t.shape, t.stride(), t.is_contiguous()


def _differences(a: torch.Tensor, b: torch.Tensor) -> set[str]:
    """The truth: each property compared on its own, the methods called."""
    return {n for n, x, y in zip(PROPERTIES, _metadata(a), _metadata(b), strict=True) if x != y}


def _miss(trial: Trial) -> Verdict:
    """What the set got wrong on one pair: a property left out, one said to differ that does
    not, and a method left uncalled (the same layout, yet `stride` said to differ)."""
    what, a, b, why = trial.case
    if trial.error is not None:  # the learner's code raised: `check` says what it raised
        raise trial.error
    got, want = trial.got, trial.expected
    if not isinstance(got, (set, frozenset)) or not set(got) <= set(PROPERTIES):
        return failed(f"return a set of names from {PROPERTIES}; for {what} you returned {got!r}")
    missing, extra = sorted(want - set(got)), sorted(set(got) - want)
    parts = (
        [f"they differ in {', '.join(missing)} too, and your set leaves it out"] if missing else []
    )
    if extra:
        parts.append(f"{', '.join(extra)} {'is' if len(extra) == 1 else 'are'} the same in both")
    methods = [n for n in ("stride", "is_contiguous") if n in extra]
    if methods and (a.stride(), a.storage_offset()) == (b.stride(), b.storage_offset()):
        parts.append(
            f"call {' and '.join(f'a.{n}()' for n in methods)}: without () it is a bound "
            "method, and two bound methods of different tensors never compare equal"
        )
    return failed(f"wrong for {what} ({why}): " + "; ".join(parts), sorted(got), sorted(want))


register(
    Exercise(
        name="02.differences",
        prompt="Write differences(a, b) -> set of the metadata properties (device, dtype, "
        "shape, stride, is_contiguous) in which two tensors differ.",
        checker=Checking(
            cases=_pairs,
            run=lambda fn, pair: fn(pair[1], pair[2]),
            expect=lambda pair: _differences(pair[1], pair[2]),
            agree=lambda got, want: isinstance(got, (set, frozenset)) and set(got) == want,
            label=lambda pair: pair[0],
            success=lambda n: (
                "your comparison sees every metadata difference: the encoder "
                "differs from a contiguous copy of itself only in its stride (and so its "
                "contiguity)."
            ),
            diagnoses=(each(_miss),),
        ),
        hint="a.device, a.dtype and a.shape are attributes; a.stride() and a.is_contiguous() "
        "are methods: call them. Compare each of the five on its own.",
        minutes=8,
    )
)
