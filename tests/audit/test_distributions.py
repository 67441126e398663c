"""The laws random ops must follow: correct kernels pass, kernels that ignore a parameter fail.

Both directions are checked on torch's own CPU kernels, seeded privately, in every dtype and in
the layouts the auditor uses: a correct draw never fails (the bounds are derived from the
sample size, not tuned to one seed), and a draw that ignores any one argument never passes.
"""

from __future__ import annotations

import pytest
import torch

from course.audit import distributions as D
from course.audit.args import SHAPES
from course.layout.named import laid_out

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64)
LAYOUTS = {"contiguous": 2, "transposed": 2, "step-sliced": 2, "permuted": 3, "channels-last": 4}
SEEDS = range(4)
# what a kernel that ignores an argument uses instead: the schema's default (or another value)
IGNORED = {
    "aten::normal_": [{"mean": 0.0}, {"std": 1.0}],
    "aten::uniform_": [{"from": 0.0}, {"to": 1.0}],
    "aten::exponential_": [{"lambd": 1.0}],
    "aten::cauchy_": [{"median": 0.0}, {"sigma": 1.0}],
    "aten::log_normal_": [{"mean": 1.0}, {"std": 2.0}],
    "aten::geometric_": [{"p": 0.5}],
    "aten::bernoulli_.float": [{"p": 0.5}],
    "aten::random_.from": [{"from": 0}, {"to": None}],
    "aten::random_.to": [{"to": 8}],
}


def overload(name: str) -> torch._ops.OpOverload:
    base, _, variant = name.removeprefix("aten::").partition(".")
    return getattr(getattr(torch.ops.aten, base), variant or "default")


def draw(name: str, dtype: torch.dtype, layout: str, seed: int, **changed) -> torch.Tensor:
    """One seeded call of the op with the auditor's arguments (some replaced) in a layout."""
    out = laid_out(torch.zeros(SHAPES[LAYOUTS[layout]], dtype=dtype), layout)
    arguments = {**D.RANDOM_OPS[name].arguments, **changed}
    if name == "aten::bernoulli_.Tensor":
        arguments["p"] = probabilities(out.shape, dtype)
    overload(name)(out, **arguments, generator=torch.Generator().manual_seed(seed))
    return out


def probabilities(shape, dtype: torch.dtype) -> torch.Tensor:
    gen = torch.Generator().manual_seed(99)
    low, high = D.PROBABILITIES
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * (high - low) + low).to(dtype)


def law(name: str, dtype: torch.dtype, shape) -> D.Law:
    arguments = dict(D.RANDOM_OPS[name].arguments)
    if name == "aten::bernoulli_.Tensor":
        arguments["p"] = probabilities(shape, dtype)
    return D.law_of(name, arguments, dtype)


@pytest.mark.parametrize("name", list(D.RANDOM_OPS))
def test_correct_kernels_follow_their_law_in_every_dtype_and_layout(name):
    for dtype in DTYPES:
        if D.unsupported(name, dtype):
            continue
        for layout in LAYOUTS:
            for seed in SEEDS:
                sample = draw(name, dtype, layout, seed)
                assert not D.misfits(sample, law(name, dtype, sample.shape)), (dtype, layout, seed)


@pytest.mark.parametrize(("name", "ignored"), [(n, i) for n, v in IGNORED.items() for i in v])
def test_a_kernel_ignoring_an_argument_is_caught(name, ignored):
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for seed in SEEDS:
            sample = draw(name, dtype, "transposed", seed, **ignored)
            assert D.misfits(sample, law(name, dtype, sample.shape)), (dtype, seed)


def test_per_element_probabilities_read_in_the_wrong_order_are_caught():
    p = probabilities(SHAPES[2], torch.float32)
    scrambled = p.flatten().flip(0).reshape(p.shape)  # the right values, at the wrong elements
    for seed in SEEDS:
        sample = torch.zeros(SHAPES[2]).bernoulli_(
            scrambled, generator=torch.Generator().manual_seed(seed)
        )
        problems = D.misfits(sample, D.law_of("aten::bernoulli_.Tensor", {"p": p}, torch.float32))
        assert any("per-element" in problem for problem in problems)


def test_the_bound_follows_the_sample_size():
    gen = torch.Generator().manual_seed(0)
    small, large = torch.rand(100, generator=gen), torch.rand(10_000, generator=gen)
    assert D.ks_uniform(small)[1] == pytest.approx(10 * D.ks_uniform(large)[1])
    even = torch.linspace(0, 1, 1001, dtype=torch.float64)[1:]
    assert D.ks_uniform(even)[0] == pytest.approx(1e-3)
    assert D.ks_uniform(torch.full((1000,), 0.5))[0] == pytest.approx(0.5)


def test_values_off_the_support_are_named():
    geometric = D.law_of("aten::geometric_", {"p": 0.3}, torch.float32)
    problems = D.misfits(torch.full((1536,), 2.5), geometric)
    assert "1536 values are not whole numbers" in problems
    uniform = D.law_of("aten::uniform_", {"from": 0.3, "to": 0.7}, torch.float32)
    assert any("mean" in p for p in D.misfits(torch.full((1536,), 0.9), uniform))


def test_unknown_ops_and_unsupported_dtypes_have_reasons():
    assert "no law is known" in D.unsupported("aten::poisson_", torch.float32)
    assert "cannot hold them" in D.unsupported("aten::normal_", torch.int64)
    assert "bool" in D.unsupported("aten::random_", torch.bool)
    assert D.unsupported("aten::random_", torch.int64) == ""


def test_every_random_op_of_this_torch_has_a_law():
    from course.audit.args import discover

    found = {op.name for op in discover() if op.kind == "random"}
    assert found <= set(D.RANDOM_OPS), found - set(D.RANDOM_OPS)
    assert len(found) >= 10


def test_laws_never_touch_the_global_rng():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    D.misfits(torch.zeros(1536), D.law_of("aten::random_.to", {"to": 7}, torch.float32))
    assert torch.equal(torch.rand(3), expected)
