"""08.random_verdict's test data: the notebook's random judge, right judges written other ways,
and wrong judges keyed by the shortcut each takes, with the words its feedback must contain."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import torch

from course.audit import judge
from course.audit.judge import ks_distance
from tests.corpus import Corpus


def reference():
    def random_verdict(before, after, sample):
        unwritten = (after == before) | (after.isnan() & before.isnan())
        if unwritten.all():
            return "silent-no-write"
        if unwritten.any():
            return "wrong-values"
        distance = ks_distance(after.flatten().double(), sample.flatten().double())
        return "ok" if distance < 0.1 else "wrong-values"

    return random_verdict


def _ks(a, s):
    return ks_distance(a.flatten().double(), s.flatten().double())


def _own() -> torch.Generator:
    """A learner's own generator, for a judge that draws its own sample."""
    return torch.Generator().manual_seed(0)


# How a wrong judge sees the unwritten elements ("kept"), or compares values ("same")
KEPT = {
    "nan-aware": lambda a, b: (a == b) | (a.isnan() & b.isnan()),
    "==": lambda a, b: a == b,
    "isnan": lambda a, b: a.isnan(),
    "int64 minimum": lambda a, b: (
        a.isnan() if a.is_floating_point() else a == torch.iinfo(torch.int64).min
    ),
    "negative": lambda a, b: a.isnan() if a.is_floating_point() else a < 0,
    "the auditor's": lambda a, b: judge.unchanged(a, b),
}
SAME = {
    "ks 0.1": lambda a, s: _ks(a, s) < 0.1,
    "ks 0.5": lambda a, s: _ks(a, s) < 0.5,
    "equal": lambda a, s: torch.equal(a, s),
    "sorted": lambda a, s: torch.equal(a.flatten().sort().values, s.flatten().sort().values),
    "mean": lambda a, s: abs(a.double().mean() - s.double().mean()) < 0.1,
    "anything": lambda a, s: True,
    "standard normal": lambda a, s: (
        abs(a.double().mean()) < 0.1 and abs(a.double().std() - 1) < 0.1
    ),
    "mean and std": lambda a, s: (
        abs(a.double().mean() - s.double().mean()) < 0.1
        and abs(a.double().std() - s.double().std()) < 0.1
    ),
    "ks 0.3": lambda a, s: _ks(a, s) < 0.3,
    "ks 0.2": lambda a, s: _ks(a, s) < 0.2,
    "own normal draw": lambda a, s: _ks(a, torch.randn(s.shape, generator=_own())) < 0.1,
    "floats only": lambda a, s: not a.is_floating_point() or _ks(a, s) < 0.1,
}


def random_judge_with(compare: str = "ks 0.1", unwritten: str = "nan-aware", partly=True):
    """The reference with one shortcut: how values are compared, how unwritten elements are
    seen, or what a partly written output is called (`partly`)."""

    def random_verdict(before, after, sample):
        left = KEPT[unwritten](after, before)
        if left.all():
            return "silent-no-write"
        if partly == "any" and left.any():
            return "silent-no-write"
        if partly == "majority" and left.double().mean() > 0.5:
            return "silent-no-write"
        if partly == "isnan" and after.isnan().any():
            return "wrong-values"
        if partly in (True, "majority") and left.any():
            return "wrong-values"
        values = after[~left] if left.any() else after
        return "ok" if SAME[compare](values, sample) else "wrong-values"

    return random_verdict


def _slip(cause: str, **how):
    return partial(random_judge_with, **how), cause


WRONG = {
    "exact values compared with the sample": _slip("pytorch#166856", compare="equal"),
    "sorted values compared": _slip("sorted or not", compare="sorted"),
    "unwritten tested with ==": _slip("NaN == NaN is False", unwritten="=="),
    "unwritten tested with isnan only": _slip("smallest value, not NaN", unwritten="isnan"),
    "any unwritten element called silent-no-write": _slip(
        "'silent-no-write' means none was", partly="any"
    ),
    "unwritten elements ignored": _slip("'ok' needs every element written", partly=False),
    "no distribution test": _slip("coverage alone is not enough", compare="anything"),
    "means compared": _slip("not its mean", compare="mean"),
    "KS threshold 0.5": _slip("too loose", compare="ks 0.5"),
    "a test for the standard normal only": _slip(
        "mean 0 and standard deviation 1", compare="standard normal"
    ),
    "the poison hard-coded as int64's minimum": _slip(
        "not int64's smallest value", unwritten="int64 minimum"
    ),
    "partial writes found with isnan only": _slip("not with isnan", partly="isnan"),
    "mostly unwritten called silent-no-write": _slip("however few were", partly="majority"),
    "mean and std compared": _slip(
        "a mean and a spread are not a distribution", compare="mean and std"
    ),
    "KS threshold 0.3": _slip("keep the threshold at 0.1", compare="ks 0.3"),
    "KS threshold 0.2": _slip("Keep the threshold the prompt names", compare="ks 0.2"),
    "KS against a normal draw, not the sample": _slip(
        "or a normal draw of your own", compare="own normal draw"
    ),
    "integers fully written taken for ok": _slip(
        "an integer output needs the distribution test too", compare="floats only"
    ),
    "the integer poison taken to be any negative value": _slip(
        "a negative draw is no poison", unwritten="negative"
    ),
    "the auditor's unwritten test": _slip(
        "the auditor's own course.audit.judge.unchanged", unwritten="the auditor's"
    ),
}


# Right random judges in other styles than the reference's
def _counted(before, after, sample):
    same = after == before
    if before.is_floating_point():
        same = torch.where(before.isnan(), after.isnan(), same)
    left = int(same.sum())
    if left == after.numel():
        return "silent-no-write"
    if left:
        return "wrong-values"
    return "ok" if ks_distance(after, sample) < 0.1 else "wrong-values"


def _numpy_ks(before, after, sample):
    a, b = after.numpy().ravel(), before.numpy().ravel()
    left = (a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else a == b
    if left.all():
        return "silent-no-write"
    if left.any():
        return "wrong-values"
    x, y = np.sort(a.astype(np.float64)), np.sort(sample.numpy().ravel().astype(np.float64))
    grid = np.concatenate([x, y])
    cdf_x = np.searchsorted(x, grid, side="right") / len(x)
    cdf_y = np.searchsorted(y, grid, side="right") / len(y)
    return "ok" if np.abs(cdf_x - cdf_y).max() < 0.1 else "wrong-values"


def _written_mask_and_own_ks(before, after, sample):
    written = (after != before) & ~(after.isnan() & before.isnan())
    if not written.any():
        return "silent-no-write"
    if not written.all():
        return "wrong-values"
    x = after.flatten().double().sort().values
    y = sample.flatten().double().sort().values
    grid = torch.cat([x, y])
    cdf_x = torch.searchsorted(x, grid, right=True) / len(x)
    cdf_y = torch.searchsorted(y, grid, right=True) / len(y)
    return "ok" if (cdf_x - cdf_y).abs().max().item() < 0.1 else "wrong-values"


def _python_lists(before, after, sample):
    pairs = zip(after.flatten().tolist(), before.flatten().tolist(), strict=True)
    kept = [x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y)) for x, y in pairs]
    if all(kept):
        return "silent-no-write"
    if any(kept):
        return "wrong-values"
    distance = ks_distance(after.reshape(-1).to(torch.float64), sample.reshape(-1).double())
    print(f"KS = {distance:.3f}")
    return "wrong-values" if distance >= 0.1 else "ok"


def _all_in_float64(before, after, sample):
    a, b = after.double(), before.double()
    left = (a == b) | (a.isnan() & b.isnan())
    if left.all():
        return "silent-no-write"
    if left.any():
        return "wrong-values"
    return "ok" if ks_distance(a, sample.double()) < 0.1 else "wrong-values"


RIGHT = {
    "elements counted": lambda: _counted,
    "numpy and its own KS": lambda: _numpy_ks,
    "a written mask and its own KS": lambda: _written_mask_and_own_ks,
    "Python lists, printing": lambda: _python_lists,
    "all in float64": lambda: _all_in_float64,
}

CORPORA = (Corpus("08.random_verdict", reference, WRONG, RIGHT),)
