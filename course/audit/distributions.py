"""What a random op's arguments promise: the law its output must follow, and a test of that.

A random op's values legitimately depend on the layout (pytorch#166856), so the auditor cannot
compare them with a reference value by value. Nor may it compare them with the same op run on a
contiguous CPU tensor: that trusts the very kernel under audit, and a CPU `normal_` that ignores
`std` agrees with itself. So each random op is judged against the law its arguments define, as
PyTorch documents it (`normal_(mean, std)` draws from N(mean, std^2), `random_(from, to)` from
the integers in [from, to)...), with tests whose thresholds follow from the sample size:

- the probability integral transform: u = F(x) is uniform on [0, 1] exactly when x follows the
  law with CDF F (for integer laws, u is spread uniformly over the step F makes at x, with a
  private generator), and a one-sample Kolmogorov-Smirnov bound sqrt(ln(2/ALPHA) / 2n) on u;
- the mean and the variance, each a z-score against the standard error the law gives for n
  samples (the variance's uses the law's kurtosis);
- for per-element parameters (`bernoulli_(p)` with a tensor `p`): residuals uncorrelated with
  the parameter, so a kernel that reads `p` in the wrong order is caught too.

The arguments the auditor passes are chosen here as well, never a parameter's default and far
enough from it that ignoring the parameter moves the law beyond these bounds (std=0.5 rather than
0.7 against the default 1, for instance).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

ALPHA = 1e-6  # the chance a correct kernel fails one test: each sweep runs a few hundred
Z_BOUND = 5.0  # a z-score this large has two-sided probability 6e-7 under the law
PIT_SEED = 20_251_022  # not the kernels' seed (0): the same stream would mirror their draws
PROBABILITIES = (0.1, 0.9)  # where a tensor of probabilities (bernoulli_'s p) takes its values
_MANTISSA = {torch.float64: 53, torch.float32: 24, torch.float16: 11, torch.bfloat16: 8}


@dataclass(frozen=True)
class Law:
    """A distribution per element: its CDF, and its moments where it has them (float64)."""

    name: str  # "N(0.3, 0.5^2)", for messages
    cdf: Callable[[torch.Tensor], torch.Tensor]  # P(X <= x)
    mean: torch.Tensor | None = None  # None: no mean (Cauchy)
    variance: torch.Tensor | None = None
    kurtosis: torch.Tensor | None = None  # excess kurtosis, for the variance's standard error
    integers: bool = False  # supported on the integers: P(X < x) = P(X <= x - 1)


def _t(value: float | torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(value, dtype=torch.float64)


def _normal_cdf(z: torch.Tensor) -> torch.Tensor:
    return 0.5 * (1 + torch.erf(z / math.sqrt(2)))


def normal(mean: float, std: float) -> Law:
    return Law(
        f"N({mean:g}, {std:g}^2)",
        lambda x: _normal_cdf((x - mean) / std),
        _t(mean),
        _t(std**2),
        _t(0.0),
    )


def uniform(low: float, high: float) -> Law:
    return Law(
        f"U[{low:g}, {high:g})",
        lambda x: ((x - low) / (high - low)).clamp(0, 1),
        _t((low + high) / 2),
        _t((high - low) ** 2 / 12),
        _t(-1.2),
    )


def exponential(rate: float) -> Law:
    return Law(
        f"Exp(rate {rate:g})",
        lambda x: 1 - torch.exp(-rate * x.clamp(min=0)),
        _t(1 / rate),
        _t(1 / rate**2),
        _t(6.0),
    )


def cauchy(median: float, sigma: float) -> Law:
    return Law(
        f"Cauchy({median:g}, {sigma:g})", lambda x: 0.5 + torch.atan((x - median) / sigma) / math.pi
    )


def log_normal(mean: float, std: float) -> Law:
    s2 = std**2
    return Law(
        f"LogNormal({mean:g}, {std:g}^2)",
        lambda x: torch.where(x > 0, _normal_cdf((x.clamp(min=1e-300).log() - mean) / std), 0.0),
        _t(math.exp(mean + s2 / 2)),
        _t((math.exp(s2) - 1) * math.exp(2 * mean + s2)),
        _t(math.exp(4 * s2) + 2 * math.exp(3 * s2) + 3 * math.exp(2 * s2) - 6),
    )


def geometric(p: float) -> Law:
    return Law(
        f"Geometric({p:g}) on 1, 2, ...",
        lambda x: torch.where(x >= 1, 1 - (1 - p) ** x.floor(), 0.0),
        _t(1 / p),
        _t((1 - p) / p**2),
        _t(6 + p**2 / (1 - p)),
        integers=True,
    )


def bernoulli(p: float | torch.Tensor) -> Law:
    p = _t(p).reshape(-1) if isinstance(p, torch.Tensor) else _t(p)  # per element, flattened
    spread = p * (1 - p)
    name = f"Bernoulli({float(p):g})" if p.dim() == 0 else "Bernoulli(p per element)"
    return Law(
        name,
        lambda x: torch.where(x < 0, 0.0, torch.where(x < 1, 1 - p, 1.0)),
        p,
        spread,
        (1 - 6 * spread) / spread,
        integers=True,
    )


def integers(low: int, high: int) -> Law:
    """Uniform on the integers low, ..., high (both included)."""
    count = high - low + 1
    return Law(
        f"uniform on the integers {low}..{high}",
        lambda x: ((x.floor() - low + 1) / count).clamp(0, 1),
        _t((low + high) / 2),
        _t((count**2 - 1) / 12),
        _t(-6 * (count**2 + 1) / (5 * (count**2 - 1))),
        integers=True,
    )


def _largest(dtype: torch.dtype) -> int:
    """random_'s default upper end: 2^mantissa for floats (every integer exact), else the max."""
    if dtype in _MANTISSA:
        return 2 ** _MANTISSA[dtype]
    return torch.iinfo(dtype).max


@dataclass(frozen=True)
class RandomOp:
    """How to audit one random overload: the arguments to pass and the law they define."""

    arguments: Mapping[str, object]  # by schema name; a tensor argument gets PROBABILITIES
    law: Callable[[Mapping[str, object], torch.dtype], Law]
    integer_dtypes: bool = False  # whether the op fills integer tensors too (else floats only)


# The in-place random overloads of torch 2.10+, by full aten name. A random op missing here is
# reported as skipped ("no law known"), never judged against a guess.
RANDOM_OPS: dict[str, RandomOp] = {
    "aten::normal_": RandomOp({"mean": 0.3, "std": 0.5}, lambda a, d: normal(a["mean"], a["std"])),
    "aten::uniform_": RandomOp({"from": 0.3, "to": 0.7}, lambda a, d: uniform(a["from"], a["to"])),
    "aten::exponential_": RandomOp({"lambd": 2.5}, lambda a, d: exponential(a["lambd"])),
    "aten::cauchy_": RandomOp(
        {"median": 0.3, "sigma": 0.4}, lambda a, d: cauchy(a["median"], a["sigma"])
    ),
    "aten::log_normal_": RandomOp(
        {"mean": 0.3, "std": 0.5}, lambda a, d: log_normal(a["mean"], a["std"])
    ),
    "aten::geometric_": RandomOp({"p": 0.3}, lambda a, d: geometric(a["p"]), True),
    "aten::bernoulli_.float": RandomOp({"p": 0.3}, lambda a, d: bernoulli(a["p"]), True),
    "aten::bernoulli_.Tensor": RandomOp({}, lambda a, d: bernoulli(a["p"])),
    "aten::random_": RandomOp({}, lambda a, d: integers(0, _largest(d)), True),
    "aten::random_.from": RandomOp(
        {"from": 3, "to": 11}, lambda a, d: integers(a["from"], a["to"] - 1), True
    ),
    "aten::random_.to": RandomOp({"to": 7}, lambda a, d: integers(0, a["to"] - 1), True),
}


def unsupported(name: str, dtype: torch.dtype) -> str:
    """Why a random op is not audited in `dtype` ("" if it is)."""
    spec = RANDOM_OPS.get(name)
    if spec is None:
        return f"no law is known for {name}, so its values cannot be judged"
    if dtype == torch.bool:
        return "a random op on bool cannot be poisoned: every value is a possible sample"
    if not dtype.is_floating_point and not spec.integer_dtypes:
        return f"{name} draws real numbers; {str(dtype).removeprefix('torch.')} cannot hold them"
    return ""


def law_of(name: str, arguments: Mapping[str, object], dtype: torch.dtype) -> Law:
    """The law `name` called with `arguments` (tensors as float64 per element) defines."""
    plain = {
        key: value.double() if isinstance(value, torch.Tensor) else value
        for key, value in arguments.items()
    }
    return RANDOM_OPS[name].law(plain, dtype)


def misfits(sample: torch.Tensor, law: Law) -> list[str]:
    """How `sample` (every element one draw) departs from `law`; empty if it follows it."""
    x = sample.flatten().double()
    problems = []
    if law.integers and not bool((x == x.floor()).all()):
        problems.append(f"{int((x != x.floor()).sum())} values are not whole numbers")
    distance, bound = ks_uniform(_transformed(x, law))
    if distance > bound:
        problems.append(f"not {law.name}: KS distance {distance:.3f} > {bound:.3f}")
    if law.mean is not None:
        problems += _moment_misfits(x, law)
    return problems


def _transformed(x: torch.Tensor, law: Law) -> torch.Tensor:
    """u = F(x); for integer laws spread uniformly over [F(x - 1), F(x)] (private generator)."""
    cdf = _per_element(law.cdf(x), x)
    if not law.integers:
        return cdf
    below = _per_element(law.cdf(x - 1), x)
    generator = torch.Generator().manual_seed(PIT_SEED)
    spread = torch.rand(x.shape, generator=generator, dtype=torch.float64)
    return below + spread * (cdf - below)


def _per_element(value: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return value.reshape(-1).expand_as(x) if value.numel() == x.numel() else value.expand_as(x)


def ks_uniform(u: torch.Tensor) -> tuple[float, float]:
    """One-sample Kolmogorov-Smirnov distance of `u` from U[0, 1], and the bound for len(u)."""
    n = u.numel()
    ranked = u.sort().values
    steps = torch.arange(1, n + 1, dtype=torch.float64) / n
    distance = max(float((steps - ranked).max()), float((ranked - (steps - 1 / n)).max()))
    return distance, math.sqrt(math.log(2 / ALPHA) / (2 * n))


def _moment_misfits(x: torch.Tensor, law: Law) -> list[str]:
    n = x.numel()
    mean = _per_element(law.mean.reshape(-1), x)
    variance = _per_element(law.variance.reshape(-1), x)
    residual = x - mean
    problems = []
    z = float(residual.sum() / variance.sum().sqrt())
    if not abs(z) <= Z_BOUND:  # also catches NaN
        problems.append(
            f"mean {float(x.mean()):.4g}, expected {float(mean.mean()):.4g} (z = {z:.1f})"
        )
    kurtosis = _per_element(law.kurtosis.reshape(-1), x)
    spread = (variance**2 * (kurtosis + 2)).sum().sqrt()
    z = float(((residual**2).sum() - variance.sum()) / spread)
    if not abs(z) <= Z_BOUND:
        problems.append(
            f"variance {float((residual**2).mean()):.4g}, expected "
            f"{float(variance.mean()):.4g} (z = {z:.1f})"
        )
    centred = mean - mean.mean()
    if n > 1 and bool((centred != 0).any()):
        z = float((residual * centred).sum() / (variance * centred**2).sum().sqrt())
        if not abs(z) <= Z_BOUND:
            problems.append(
                f"values do not follow their per-element parameters (correlation z = {z:.1f})"
            )
    return problems


def detectable(n: int) -> str:
    """What the tests flag at sample size n (about half the time, at the bound): the effect a
    learner can rule out when a random op is "ok", in words.

    The KS bound is the largest gap between CDFs a correct kernel reaches (a uniform range cut
    by a fraction f moves the CDF by f; a normal's std scaled by 1.05 by about 0.012); the
    mean's z-bound is Z_BOUND standard errors, i.e. a shift of Z_BOUND / sqrt(n) standard
    deviations; the variance's, for a normal law, a relative change of Z_BOUND * sqrt(2 / n)
    (a std off by half that)."""
    ks = math.sqrt(math.log(2 / ALPHA) / (2 * n))
    shift = Z_BOUND / math.sqrt(n)
    std = Z_BOUND * math.sqrt(2 / n) / 2
    return (
        f"with {n:,} draws it detects a CDF off by {ks:.1%} (a uniform range {ks:.1%} short), "
        f"a mean off by {shift:.2f} std, or a normal's std off by {std:.1%}; smaller effects "
        "can pass"
    )
