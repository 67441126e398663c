"""The layout auditor: the historical broken sets, the CPU, and bugs it has never seen."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.audit.core import (
    LAYOUTS,
    AuditResult,
    audit,
    flagged_ops,
    summary,
)
from tests import forked

ADAM = {"aten::addcmul_", "aten::addcdiv_"}
RANDOM = {
    "aten::normal_",
    "aten::uniform_",
    "aten::exponential_",
    "aten::random_",
    "aten::bernoulli_",
}
NON_CONTIGUOUS = {"transposed", "step-sliced", "permuted", "channels-last"}
# A real bug of the CPU build this course runs on (torch 2.13.0, x86 with oneDNN): gelu_out_cpu
# takes the oneDNN path when its *input* is contiguous and never checks `out`, so gelu(x, out=y)
# with a non-contiguous y loses its result. The auditor found it; nothing else is flagged.
CPU_BUGS = {("aten::gelu_", "out=transposed")}


@pytest.fixture(scope="module")
def cpu_results() -> list[AuditResult]:
    return audit("cpu")


def test_the_cpu_sweep_covers_every_dtype_and_layout(cpu_results):
    ran = [r for r in cpu_results if r.verdict != "skipped"]
    assert {r.dtype for r in ran} == {"float32", "float64", "float16", "bfloat16", "int64", "bool"}
    assert {r.layout for r in ran} == set(LAYOUTS)
    assert len({r.op for r in ran if r.dtype == "float32"}) > 100
    assert len({r.op for r in ran if r.dtype == "int64"}) > 40


def test_the_cpu_has_only_its_known_lost_write(cpu_results):
    assert not [r for r in cpu_results if r.verdict == "error"]
    assert {(r.op, r.layout) for r in cpu_results if r.flagged} <= CPU_BUGS
    assert all(r.detail for r in cpu_results if r.verdict == "skipped")
    assert all(r.reproduction.startswith("import torch") for r in cpu_results if r.flagged)


@pytest.mark.parametrize(
    ("profile", "broken"),
    [
        ("2.2.1-macos14", ADAM | RANDOM),
        ("2.4-macos14", RANDOM),
        ("fixed-macos14", set()),
        ("macos15", set()),
    ],
)
def test_exactly_the_historical_broken_set(profile, broken, cpu_results):
    results = audit(f"emulated:{profile}", dtypes=["float32", "int64"])
    # the emulation runs the CPU's kernels, yet the host's own bug (gelu.out, CPU_BUGS) must
    # not show through: an emulated profile shows the real device, macOS 15 included
    assert {op for op, _ in CPU_BUGS} <= {r.op for r in cpu_results if r.flagged}
    assert flagged_ops(results) == broken
    assert not [r for r in results if r.verdict in ("error", "wrong-values")]
    overloads = {r.op for r in results if r.flagged}
    if "aten::random_" in broken:
        assert {"aten::random_", "aten::random_.from", "aten::random_.to"} <= overloads
    assert {r.layout for r in results if r.flagged} <= NON_CONTIGUOUS | {"out=transposed"}


def test_the_story_ops_on_2_2_1_in_every_dtype_and_layout():
    results = audit("emulated:2.2.1-macos14", ops=["addcmul_", "addcdiv_"])
    assert {r.dtype for r in results} == {"float32", "float16", "bfloat16"} | (
        {"int64"} if any(r.dtype == "int64" for r in results) else set()
    )
    for r in results:
        lost = r.layout in NON_CONTIGUOUS | {"out=transposed"}
        assert r.verdict == ("silent-no-write" if lost else "ok"), r
    assert all("--device emulated:2.2.1-macos14" in r.reproduction for r in results if r.flagged)


def test_the_redesigned_backend_passes_the_whole_audit():
    results = audit("emulated", dtypes="float32", backend=emps.redesigned_backend())
    assert flagged_ops(results) <= {op for op, _ in CPU_BUGS}
    assert summary(results)["ok"] > 900


# --- planted bugs: kernels replaced through torch.library on the CPU --------------------------


def drop_when_strided(self):  # the story's pattern
    if self.is_contiguous():
        self.copy_(torch.sin(self))
    return self


def wrong_everywhere(self, other):
    self.copy_(torch.mul(self, other) + 1)
    return self


def half_written(self):
    result = torch.cos(self)
    if not self.is_contiguous():
        every_other = torch.arange(self.numel()).reshape(self.shape) % 2 == 0
        result = torch.where(every_other, result, self)
    self.copy_(result)
    return self


def ignores_value(self, tensor1, tensor2, *, value=1):
    self.copy_(torch.addcdiv(self, tensor1, tensor2))  # as if value were always 1
    return self


def wrong_for_integers(self, other):
    result = torch.mul(self, other)
    if not self.dtype.is_floating_point and self.dtype != torch.bool:
        result = result + 1
    self.copy_(result)
    return self


def raises_when_strided(self):
    if not self.is_contiguous():
        raise RuntimeError("planted: needs a contiguous tensor")
    self.copy_(torch.exp(self))
    return self


def wrong_for_channels_last(self):
    result = torch.neg(self)
    if not self.is_contiguous() and self.is_contiguous(memory_format=torch.channels_last):
        result = result + 1
    self.copy_(result)
    return self


def wrong_with_expanded_input(self, other, *, alpha=1):
    result = torch.add(self, other, alpha=alpha)
    if 0 in other.stride():
        result = result + 1
    self.copy_(result)
    return self


def wrong_above_4096(self):  # a vector path taken only for large tensors
    result = torch.sqrt(self)
    if self.numel() > 4096:
        result = result + 1
    self.copy_(result)
    return self


def raises_everywhere(self):
    raise RuntimeError("planted: always fails")


def _everywhere_but_out(verdict):
    return lambda dtype, layout: "ok" if layout == "out=transposed" else verdict


PLANTED = {  # op -> (kernel, expected verdict for (dtype, layout))
    "sin_": (
        drop_when_strided,
        lambda d, layout: "silent-no-write" if layout in NON_CONTIGUOUS else "ok",
    ),
    "mul_.Tensor": (wrong_everywhere, _everywhere_but_out("wrong-values")),
    "cos_": (half_written, lambda d, layout: "wrong-values" if layout in NON_CONTIGUOUS else "ok"),
    "addcdiv_": (ignores_value, _everywhere_but_out("wrong-values")),
    "mul_.Scalar": (
        wrong_for_integers,
        lambda d, layout: "wrong-values" if d == "int64" and layout != "out=transposed" else "ok",
    ),
    "exp_": (raises_when_strided, lambda d, layout: "error" if layout in NON_CONTIGUOUS else "ok"),
    "neg_": (
        wrong_for_channels_last,
        lambda d, layout: "wrong-values" if layout == "channels-last" else "ok",
    ),
    "add_.Tensor": (
        wrong_with_expanded_input,
        lambda d, layout: "wrong-values" if layout == "expanded" else "ok",
    ),
    "tan_": (raises_everywhere, _everywhere_but_out("error")),
    "sqrt_": (wrong_above_4096, lambda d, layout: "wrong-values" if layout == "large" else "ok"),
}


def test_planted_bugs_get_the_right_verdict_and_nothing_else():
    with torch.library._scoped_library("aten", "IMPL") as library:
        for name, (kernel, _) in PLANTED.items():
            library.impl(name, kernel, "CPU")
        results = audit("cpu", ops=list(PLANTED))
    for name, (_, rule) in PLANTED.items():
        mine = [r for r in results if r.op == f"aten::{name}"]
        assert mine, name
        wrong = [
            (r.dtype, r.layout, r.verdict) for r in mine if r.verdict != rule(r.dtype, r.layout)
        ]
        assert not wrong, f"{name}: {wrong}"
        assert any(r.verdict != "ok" for r in mine), f"{name}: the bug went unseen"
    assert all(r.reproduction for r in results if r.verdict != "ok")
    assert summary(audit("cpu", ops=list(PLANTED), dtypes="float32"))["flagged"] == []  # restored


def test_a_planted_random_bug_writing_half_is_wrong_values():
    def half_uniform_(self, low=0.0, high=1.0, generator=None):  # forgets every other element
        mask = torch.arange(self.numel()).reshape(self.shape) % 2 == 0
        if self.is_contiguous():
            mask = torch.ones_like(mask)
        spread = torch.arange(self.numel()).reshape(self.shape) / self.numel()  # rand would recurse
        self.copy_(torch.where(mask, spread * (high - low) + low, self))
        return self

    with torch.library._scoped_library("aten", "IMPL") as library:
        library.impl("uniform_", half_uniform_, "CPU")
        (result,) = audit("cpu", ops=["uniform_"], layouts=["transposed"], dtypes="float32")
    assert result.verdict == "wrong-values"
    assert "never written" in result.detail


def _standard_normal(self, generator):
    """Box-Muller from uniform_ draws (normal_ itself may be the planted kernel)."""
    u1, u2 = (torch.rand(self.shape, generator=generator, dtype=torch.float64) for _ in range(2))
    return torch.sqrt(-2 * torch.log1p(-u1)) * torch.cos(2 * torch.pi * u2)


def normal_ignoring_std(self, mean=0.0, std=1.0, *, generator=None):
    return self.copy_(mean + _standard_normal(self, generator))


def normal_ignoring_mean(self, mean=0.0, std=1.0, *, generator=None):
    return self.copy_(std * _standard_normal(self, generator))


def exponential_ignoring_lambd(self, lambd=1.0, *, generator=None):
    u = torch.rand(self.shape, generator=generator, dtype=torch.float64)
    return self.copy_(-torch.log1p(-u))


def uniform_always_raising(self, low=0.0, high=1.0, *, generator=None):
    raise RuntimeError("planted: uniform_ always fails")


@pytest.mark.parametrize(
    ("name", "kernel", "verdict"),
    [
        ("normal_", normal_ignoring_std, "wrong-values"),
        ("normal_", normal_ignoring_mean, "wrong-values"),
        ("exponential_", exponential_ignoring_lambd, "wrong-values"),
        ("uniform_", uniform_always_raising, "error"),
    ],
)
def test_planted_random_bugs_are_caught_against_the_law(name, kernel, verdict):
    with torch.library._scoped_library("aten", "IMPL") as library:
        library.impl(name, kernel, "CPU")
        results = audit("cpu", ops=[name])
    assert {r.dtype for r in results} == {"float32", "float64", "float16", "bfloat16"}
    assert {r.verdict for r in results} == {verdict}, {(r.verdict, r.detail) for r in results}
    # every layout but the expanded inputs; bfloat16 not at `large` (it rounds the draws)
    assert len(results) == 4 * (len(LAYOUTS) - 1) - 1
    assert all(r.reproduction for r in results)


def uniform_range_short(self, low=0.0, high=1.0, *, generator=None):
    whole = torch.randint(0, 2**53, self.shape, generator=generator)  # rand would recurse
    u = whole.double() / 2**53
    return self.copy_(low + 0.97 * (high - low) * u)  # 3% of the range never drawn


def exponential_rate_off(self, lambd=1.0, *, generator=None):
    u = torch.rand(self.shape, generator=generator, dtype=torch.float64)
    return self.copy_(-torch.log1p(-u) / (1.1 * lambd))


def normal_std_off(self, mean=0.0, std=1.0, *, generator=None):
    return self.copy_(mean + 1.05 * std * _standard_normal(self, generator))


@pytest.mark.parametrize(
    ("name", "kernel"),
    [
        ("uniform_", uniform_range_short),
        ("exponential_", exponential_rate_off),
        ("normal_", normal_std_off),
    ],
)
def test_random_kernels_a_little_off_are_caught_by_the_default_sweeps_large_size(name, kernel):
    """The 1,536 draws of a layout cannot tell these from the law (the ok says what they can);
    the default sweep's `large` layout, 71,680 draws, can."""
    with torch.library._scoped_library("aten", "IMPL") as library:
        library.impl(name, kernel, "CPU")
        results = audit("cpu", ops=[name], dtypes="float32", layouts=["contiguous", "large"])
    verdict = {r.layout: r for r in results}
    assert verdict["large"].verdict == "wrong-values", verdict["large"]
    small = verdict["contiguous"]
    assert small.verdict == "wrong-values" or "with 1,536 draws it detects" in small.detail


def test_an_always_raising_random_kernel_is_an_error_on_the_emulated_device_too():
    with torch.library._scoped_library("aten", "IMPL") as library:
        library.impl("uniform_", uniform_always_raising, "CPU")
        results = audit("emulated:fixed-macos14", ops=["uniform_"], dtypes="float32")
    assert results and {r.verdict for r in results} == {"error"}


# --- the learner's state, the environment, bad input ------------------------------------------


def test_the_cpu_audit_works_without_the_emulated_device():
    code = (
        "import sys; sys.modules['course.emps'] = None\n"
        "from course.audit.core import audit\n"
        "print(sorted({r.verdict for r in audit('cpu', ops='mul_.Tensor')}))"
    )
    done = forked.python(code, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "['ok']", done.stderr


def test_the_widgets_names_load_from_the_panel_module_on_first_use():
    from course.audit import core, panel

    assert core.audit_panel is panel.audit_panel and core.draw_audit is panel.draw_audit
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        core.nope  # noqa: B018
