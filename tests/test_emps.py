"""The emulated MPS device: which ops drop writes on each profile, and what it must never do."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.errors import CourseError

POISON = -7.0


def transposed(n: int = 8) -> torch.Tensor:
    return torch.full((n, n), POISON, device=emps.DEVICE).t()


def ones(n: int = 8) -> torch.Tensor:
    return torch.ones(n, n, device=emps.DEVICE)


OPS = {
    "mul_": lambda out: out.mul_(2.0),
    "lerp_": lambda out: out.lerp_(ones(), 0.5),
    "add_": lambda out: out.add_(ones()),
    "addcmul_": lambda out: out.addcmul_(ones(), ones(), value=0.5),
    "addcdiv_": lambda out: out.addcdiv_(ones(), ones() * 2, value=0.5),
    "normal_": lambda out: out.normal_(),
    "uniform_": lambda out: out.uniform_(),
    "exponential_": lambda out: out.exponential_(),
    "random_": lambda out: out.random_(1, 5),
    "bernoulli_": lambda out: out.bernoulli_(0.5),
}
BROKEN = {
    "2.2.1-macos14": {
        "addcmul_",
        "addcdiv_",
        "normal_",
        "uniform_",
        "exponential_",
        "random_",
        "bernoulli_",
    },
    "2.4-macos14": {"normal_", "uniform_", "exponential_", "random_", "bernoulli_"},
    "fixed-macos14": set(),
    "macos15": set(),
}


@pytest.mark.parametrize("profile", list(BROKEN))
@pytest.mark.parametrize("op", list(OPS))
def test_which_ops_drop_writes(profile, op):
    with emps.use_profile(profile):
        out = transposed()
        OPS[op](out)
        unchanged = bool((out.cpu() == POISON).all())
    assert unchanged == (op in BROKEN[profile])


@pytest.mark.parametrize("op", list(OPS))
def test_contiguous_outputs_always_written(op):
    out = torch.full((8, 8), POISON, device=emps.DEVICE)
    OPS[op](out)
    assert not bool((out.cpu() == POISON).any())


def test_only_the_output_layout_matters():
    out = torch.zeros(8, 8, device=emps.DEVICE)
    out.addcmul_(ones().t(), ones()[:, :].t(), value=1.0)
    assert bool((out.cpu() == 1).all())


def test_contiguous_results_bitwise_equal_cpu():
    torch.manual_seed(0)
    a, b, c = (torch.randn(16, 16) for _ in range(3))
    ref = a.clone().addcmul_(b, c, value=0.3).addcdiv_(b, c.abs() + 1, value=-0.1).lerp_(c, 0.2)
    dev = a.clone().to("emps").addcmul_(b.to("emps"), c.to("emps"), value=0.3)
    dev = dev.addcdiv_(b.to("emps"), c.abs().to("emps") + 1, value=-0.1).lerp_(c.to("emps"), 0.2)
    assert torch.equal(dev.cpu(), ref)


def test_model_moves_and_keeps_strides():
    layer = torch.nn.Linear(4, 6)
    layer.weight.data = torch.randn(4, 6).t().clone()
    layer.to(emps.DEVICE)
    assert layer.weight.device.type == "emps" and layer.weight.stride() == (1, 6)
    layer.to("cpu")
    assert type(layer.weight.data) is torch.Tensor and layer.weight.stride() == (1, 6)


def test_autograd_and_adam_run_unmodified():
    layer = torch.nn.Linear(4, 3).to(emps.DEVICE)
    opt = torch.optim.Adam(layer.parameters(), lr=0.1)
    layer(torch.randn(5, 4, device=emps.DEVICE)).sum().backward()
    before = layer.weight.detach().cpu().clone()
    opt.step()
    assert opt.state[layer.weight]["exp_avg"].device.type == "emps"
    assert not torch.equal(layer.weight.detach().cpu(), before)


def test_adam_state_inherits_noncontiguous_layout():
    w = torch.nn.Parameter(torch.randn(6, 4).t().clone().to(emps.DEVICE))
    w.grad = torch.ones(4, 6, device=emps.DEVICE)
    opt = torch.optim.Adam([w])
    opt.step()
    assert opt.state[w]["exp_avg_sq"].stride() == (1, 4)
    assert float(opt.state[w]["exp_avg_sq"].cpu().abs().max()) == 0.0


def test_float64_refused_like_mps():
    with pytest.raises(TypeError, match="MPS framework doesn't support float64"):
        torch.zeros(3, device=emps.DEVICE).double()
    with pytest.raises(TypeError, match="float64"):
        torch.zeros(3, dtype=torch.float64).to(emps.DEVICE)


def test_mixing_devices_is_an_error_but_cpu_scalars_are_fine():
    with pytest.raises(RuntimeError, match="same device"):
        torch.zeros(3, device=emps.DEVICE) + torch.zeros(3)
    assert (torch.zeros(3, device=emps.DEVICE) + torch.tensor(2.0)).cpu().tolist() == [2.0] * 3


def test_profile_restored_after_exception():
    before = emps.current_backend()
    with pytest.raises(ZeroDivisionError), emps.use_profile("macos15"):
        assert emps.current_profile().name == "macos15"
        raise ZeroDivisionError("inside the block")
    assert emps.current_backend() is before


def test_recorder_restored_and_sees_lost_writes():
    with emps.record() as log:
        transposed().addcmul_(ones(), ones())
        transposed().mul_(2)
    assert [e.op for e in log.lost()] == ["aten::addcmul_"]
    mul = [e for e in log.events if e.op == "aten::mul_"][0]
    assert mul.temporaries >= 1 and not mul.lost_write
    count = len(log.events)
    transposed().addcmul_(ones(), ones())
    assert len(log.events) == count, "a finished recorder must not keep recording"


def test_macos15_makes_no_temporaries():
    with emps.use_profile("macos15"), emps.record() as log:
        transposed().mul_(2)
    assert all(e.temporaries == 0 for e in log.events)


def test_redesigned_backend_loses_nothing():
    with emps.use_backend(emps.redesigned_backend()), emps.record() as log:
        for op in OPS.values():
            out = transposed()
            op(out)
            assert not bool((out.cpu() == POISON).any())
    assert not log.lost()


def test_custom_broken_set_and_unknown_family():
    profile = emps.get_profile("fixed-macos14").with_broken({"addcdiv"})
    with emps.use_profile(profile):
        out = transposed()
        out.addcdiv_(ones(), ones())
        assert bool((out.cpu() == POISON).all())
    with pytest.raises(CourseError, match="unknown kernel families"):
        profile.with_broken({"matmul"})
    with pytest.raises(CourseError, match="unknown emulated profile"):
        emps.get_profile("2.3")


def test_a_profile_shows_a_learner_its_versions_only():
    spoilers = ("addcmul", "addcdiv", "drop", "fixed", "random", "temporaries")
    for profile in emps.PROFILES.values():
        assert "macOS" in profile.label and not any(word in profile.label for word in spoilers)
        assert "macOS" in profile.description and profile.references
    assert emps.get_profile(emps.DEFAULT_PROFILE) is emps.TORCH_2_2_1
    custom = emps.FIXED_MACOS14.with_broken({"addcdiv"}, name="mine")
    assert custom.name == "mine"
    assert custom.label == "a recent PyTorch on macOS 14, broken=['addcdiv']"


def test_repr_names_the_device():
    assert "device='emps:0'" in repr(torch.zeros(2, device=emps.DEVICE))


def test_a_second_gather_of_an_unchanged_tensor_is_a_fresh_equal_copy():
    source = torch.arange(12.0).reshape(3, 4).t()
    call = emps.KernelCall("aten::x_", "x", source, [source], graph=lambda out, ins: out)
    first, second = call.placeholder(source), call.placeholder(source)
    assert second.buffer.data_ptr() != first.buffer.data_ptr()
    assert torch.equal(second.buffer, first.buffer) and second.buffer.is_contiguous()
    assert call.temporaries == 2, "each gather is still a temporary of the modelled kernel"
    first.buffer.add_(1)  # a changed copy must not be reused
    assert torch.equal(call.placeholder(source).buffer, source.contiguous())
    source.mul_(2)  # nor a copy of a tensor that changed since
    assert torch.equal(call.placeholder(source).buffer, source.contiguous())
