"""Ordinary calls a learner types on the emulated device behave as on a real device."""

from __future__ import annotations

import io

import pytest
import torch

from course import emps
from course.emps import device
from course.emps.mps_kernels import same_bits
from course.errors import CourseError


def transposed(rows: int = 4, cols: int = 6, value: float = 0.0) -> torch.Tensor:
    return torch.full((cols, rows), value, device=emps.DEVICE).t()


def roundtrip(obj, **load_kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load_kwargs)


# foreach: MPS had no foreach kernels; the per-tensor loop reaches the emulated kernels.


@pytest.mark.parametrize("profile", list(emps.PROFILES))
def test_foreach_reaches_the_per_tensor_kernels(profile):
    chosen = emps.get_profile(profile)
    outs = [transposed(), torch.zeros(5, device=emps.DEVICE)]
    ones = [torch.ones_like(o) for o in outs]
    with emps.use_profile(chosen), emps.record() as log:
        torch._foreach_addcmul_(outs, ones, ones, value=2.0)
    assert log.ops() == ["aten::addcmul_", "aten::addcmul_"]
    lost = "addcmul" in chosen.broken
    assert [e.lost_write for e in log.events] == [lost, False]
    assert bool(outs[0].cpu().eq(0).all()) == lost
    assert outs[1].cpu().eq(2).all()


def test_out_of_place_foreach_returns_device_tensors():
    results = torch._foreach_add([transposed(), torch.zeros(3, device=emps.DEVICE)], 1.0)
    assert all(r.device.type == "emps" and r.cpu().eq(1).all() for r in results)


# fused=True: refused before 2.4, Adam/AdamW from 2.4, SGD later, Adagrad never on MPS.


def fused_step(name: str, device_name: str) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(5, 3, generator=gen).t().to(device_name))
    weight.grad = torch.randn(3, 5, generator=gen).to(device_name)
    opt = getattr(torch.optim, name)([weight], lr=0.1, fused=True)
    for _ in range(2):
        opt.step()
    return [weight.detach().cpu()]


@pytest.mark.parametrize(
    ("profile", "name", "outcome"),
    [
        ("2.2.1-macos14", "Adam", RuntimeError),
        ("2.2.1-macos14", "SGD", RuntimeError),
        ("2.4-macos14", "Adam", None),
        ("2.4-macos14", "AdamW", None),
        ("2.4-macos14", "SGD", NotImplementedError),
        ("2.4-macos14", "Adagrad", NotImplementedError),
        ("fixed-macos14", "Adam", None),
        ("fixed-macos14", "SGD", None),
        ("macos15", "AdamW", None),
        ("macos15", "Adagrad", NotImplementedError),
    ],
)
def test_fused_optimizers_per_profile(profile, name, outcome):
    with emps.use_profile(profile):
        if outcome is None:
            result = fused_step(name, emps.DEVICE)
            assert same_bits(result[0], fused_step(name, "cpu")[0])
        else:
            with pytest.raises(outcome, match="fused=True|not currently implemented for the MPS"):
                fused_step(name, emps.DEVICE)


# Creating, copying and reading tensors.


def test_tensor_factories_from_python_data():
    base = torch.zeros(2, device=emps.DEVICE)
    for made in (
        torch.tensor([1.0, 2.0], device=emps.DEVICE),
        torch.as_tensor([1.0, 2.0], device="emps"),
        base.new_tensor([1.0, 2.0]),
    ):
        assert made.device.type == "emps" and made.tolist() == [1.0, 2.0]


def test_copies_across_the_device_boundary():
    source = torch.arange(6.0, device=emps.DEVICE).reshape(2, 3)
    cpu = torch.zeros(2, 3).copy_(source)
    assert type(cpu) is torch.Tensor and cpu.tolist() == source.tolist()
    back = torch.zeros(2, 3, device=emps.DEVICE).copy_(cpu + 1)
    assert back.device.type == "emps" and back.cpu().equal(cpu + 1)


def test_state_dicts_load_across_devices():
    torch.manual_seed(0)
    on_device, on_cpu = torch.nn.Linear(3, 2).to(emps.DEVICE), torch.nn.Linear(3, 2)
    on_cpu.load_state_dict(on_device.state_dict())
    assert on_cpu.weight.equal(on_device.weight.detach().cpu())
    on_device.load_state_dict(torch.nn.Linear(3, 2).state_dict())
    assert on_device.weight.device.type == "emps"


def test_save_and_load_with_the_default_weights_only():
    weight = torch.arange(12.0).reshape(3, 4).t().to(emps.DEVICE)
    loaded = roundtrip({"w": weight})["w"]
    assert loaded.device.type == "emps" and loaded.stride() == (1, 4)
    assert loaded.cpu().equal(weight.cpu())
    on_cpu = roundtrip({"w": weight}, map_location="cpu")["w"]
    assert type(on_cpu) is torch.Tensor and on_cpu.equal(weight.cpu())
    model = torch.nn.Linear(3, 2).to(emps.DEVICE)
    state = roundtrip(model.state_dict())
    assert set(state) == {"weight", "bias"} and state["weight"].device.type == "emps"
    parameter = roundtrip(model.weight)
    assert isinstance(parameter, torch.nn.Parameter) and parameter.requires_grad


def test_reading_values():
    values = torch.tensor([[1.5, 2.0]], device=emps.DEVICE)
    assert values.tolist() == [[1.5, 2.0]]
    assert f"{values.sum():.2f}" == "3.50"
    assert values.cpu().numpy().tolist() == [[1.5, 2.0]]
    with pytest.raises(TypeError, match="can't convert emps:0 device type tensor to numpy"):
        values.numpy()


def test_moving_a_model_inside_inference_mode():
    with torch.inference_mode():
        layer = torch.nn.Linear(3, 2).to(emps.DEVICE)
        out = layer(torch.ones(1, 3, device=emps.DEVICE))
    assert layer.weight.device.type == "emps" and out.shape == (1, 2)


# What a one-device backend refuses.


@pytest.mark.parametrize(
    "call",
    [
        lambda: torch.zeros(2, device="emps:1"),
        lambda: torch.zeros(2).to("emps:1"),
        lambda: torch.nn.Linear(2, 2).to("emps:1"),
    ],
)
def test_a_second_device_is_refused(call):
    with pytest.raises(CourseError, match="'emps:1' does not exist.*'emps:0'"):
        call()


def test_autocast_is_refused_clearly():
    with pytest.raises(CourseError, match="autocast.*not emulated"), torch.autocast("emps"):
        pass


def test_index_zero_and_plain_name_are_the_device():
    assert torch.zeros(1, device="emps:0").device == torch.zeros(1, device="emps").device


# The torch floor: one clear message naming the real floor.


def test_old_torch_is_refused_with_the_real_floor(monkeypatch):
    monkeypatch.setattr(device, "_LIBRARY", [])
    monkeypatch.delattr(torch.utils.backend_registration, "_setup_privateuseone_for_python_backend")
    monkeypatch.setattr(torch, "__version__", "2.9.0")
    with pytest.raises(CourseError) as caught:
        device.register()
    message = str(caught.value)
    assert "torch >= 2.10" in message and "torch 2.9.0 lacks" in message
    assert ">= 2.9 " not in message and ">= 2.9)" not in message


@pytest.mark.parametrize(
    "call",
    [
        lambda a, empty: torch.add(a, a, out=empty(0)),
        lambda a, empty: torch.sum(a, 0, out=empty(0)),
        lambda a, empty: torch.max(a, 0, out=(empty(0), empty(0, dtype=torch.long))),
    ],
)
def test_an_out_tensor_that_would_be_resized_is_refused(call):
    def empty(*size, dtype=torch.float32):
        return torch.empty(*size, dtype=dtype, device=emps.DEVICE)

    with pytest.raises(CourseError, match=r"resized its out= tensor from \(0,\)"):
        call(torch.ones(2, 3, device=emps.DEVICE), empty)


@pytest.mark.parametrize(
    ("make", "shape"),
    [
        (lambda d: torch.arange(6.0, device=d), (6,)),
        (lambda d: torch.arange(0, 3, 0.5, device=d), (6,)),
        (lambda d: torch.eye(3, 4, device=d), (3, 4)),
        (lambda d: torch.triu_indices(3, 3, device=d), (2, 6)),
        (lambda d: torch.hann_window(5, device=d), (5,)),
        (lambda d: torch.kaiser_window(5, device=d), (5,)),
        (lambda d: torch.linspace(0, 1, 5, device=d), (5,)),
        (lambda d: torch.full((2, 3), 7.0, device=d), (2, 3)),
    ],
)
def test_factories_give_the_cpu_result_with_its_shape(make, shape):
    made = make(emps.DEVICE)
    assert made.device.type == "emps" and made.shape == shape
    assert made.cpu().equal(make("cpu"))


def test_zeros_still_runs_the_fill_kernel_as_on_mps():
    with emps.record() as log:
        torch.zeros(3, device=emps.DEVICE)
    assert log.ops() == ["aten::zero_"]
