"""Ordinary calls a learner types on the emulated device behave as on a real device."""

from __future__ import annotations

import io
import warnings

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
        lambda a, empty: torch.mul(a, 2, out=empty(5)),
        lambda a, empty: torch.addcmul(a, a, a, out=empty(4, 4).T),
        lambda a, empty: torch.addcmul(a.T, a.T, a.T, out=empty(5, 5)),
    ],
)
@pytest.mark.parametrize("profile", list(emps.PROFILES))
def test_an_out_tensor_of_another_shape_is_resized_as_on_the_cpu(call, profile):
    """Shape, strides, values and warning as on the CPU (resize_output, then the kernel);
    2.2.1's lost write only where its historical bug applies (a non-contiguous addcmul out)."""

    def run(device):
        def empty(*size, dtype=torch.float32):
            return torch.zeros(*size, dtype=dtype, device=device)

        a = torch.arange(6.0, device=device).reshape(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call(a, empty)
        outs = result if isinstance(result, tuple) else (result,)
        return [(o.shape, o.stride(), o.cpu()) for o in outs], [str(w.message) for w in caught]

    with emps.use_profile(profile):
        on_device, device_warnings = run(emps.DEVICE)
    on_cpu, cpu_warnings = run("cpu")
    assert device_warnings == cpu_warnings
    for (shape, stride, values), (cpu_shape, cpu_stride, cpu_values) in zip(
        on_device, on_cpu, strict=True
    ):
        assert (shape, stride) == (cpu_shape, cpu_stride)
        contiguous = torch.empty_strided(shape, stride).is_contiguous()
        historical = profile == emps.TORCH_2_2_1.name and not contiguous  # addcmul's out only
        assert same_bits(values, cpu_values) != historical


def test_a_resized_out_tensor_keeps_the_historical_lost_write():
    """2.2.1's addcmul kernel runs after the resize: transposed inputs give the resized output
    transposed strides (the kernel's layout), and its write is lost, as on the real stack;
    contiguous inputs give a contiguous output, which the kernel writes."""
    ones = torch.ones(2, 2, device=emps.DEVICE)
    with emps.use_profile(emps.TORCH_2_2_1), pytest.warns(UserWarning, match="was resized"):
        written = torch.addcmul(ones, ones, ones, out=torch.zeros(3, 3, device=emps.DEVICE).T)
        lost = torch.addcmul(ones.T, ones.T, ones, out=torch.zeros(3, 3, device=emps.DEVICE).T)
    assert written.shape == lost.shape == (2, 2)
    assert written.cpu().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert lost.stride() == (1, 2) and lost.cpu().tolist() == [[0.0, 0.0], [0.0, 0.0]]


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


def test_repr_names_the_device():
    assert "device='emps:0'" in repr(torch.zeros(2, device=emps.DEVICE))


# Ordinary code around the device: tied weights, checkpoints, indices, plain CPU code.


class TiedLM(torch.nn.Module):
    """An embedding tied to the output layer, as in GPT-2 and most language models."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(11, 6)
        self.out = torch.nn.Linear(6, 11, bias=False)
        self.out.weight = self.embed.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.embed(tokens)))


def train_tied(device: str, steps: int = 4) -> TiedLM:
    torch.manual_seed(0)
    model = TiedLM().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    tokens = torch.arange(8, device=device) % 11
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(tokens), (tokens + 1) % 11).backward()
        opt.step()
    return model


@pytest.mark.parametrize("profile", list(emps.PROFILES))
def test_tied_weights_stay_one_parameter_and_train_as_on_the_cpu(profile):
    with emps.use_profile(profile):
        model = train_tied(emps.DEVICE)
    assert model.embed.weight is model.out.weight and len(list(model.parameters())) == 1
    assert model.embed.weight.device.type == "emps"
    reference = train_tied("cpu")
    assert same_bits(model.embed.weight.detach().cpu(), reference.embed.weight.detach())


def test_an_optimizer_made_before_the_move_keeps_its_parameters():
    model = TiedLM()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.to(emps.DEVICE)
    assert opt.param_groups[0]["params"][0] is model.embed.weight
    model(torch.tensor([1, 2], device=emps.DEVICE)).sum().backward()
    opt.step()
    assert model.embed.weight.grad.device.type == "emps"


def test_deepcopy_keeps_ties_and_values():
    import copy

    model = TiedLM().to(emps.DEVICE)
    twin = copy.deepcopy(model)
    assert twin.embed.weight is twin.out.weight and twin.embed.weight.device.type == "emps"
    assert twin.embed.weight.data_ptr() != model.embed.weight.data_ptr()
    assert same_bits(twin.embed.weight.detach().cpu(), model.embed.weight.detach().cpu())


@pytest.mark.parametrize("where", ["emps", "emps:0", {"cpu": "emps"}, torch.device("emps")])
def test_a_cpu_checkpoint_loads_onto_the_device(tmp_path, where):
    torch.manual_seed(0)
    source = TiedLM()
    torch.save(source.state_dict(), tmp_path / "model.pt")
    state = torch.load(tmp_path / "model.pt", map_location=where)
    assert {t.device.type for t in state.values()} == {"emps"}
    model = TiedLM().to(emps.DEVICE)
    model.load_state_dict(state)
    assert model.embed.weight is model.out.weight
    assert same_bits(model.embed.weight.detach().cpu(), source.embed.weight.detach())


def test_a_device_checkpoint_loads_back_and_onto_the_cpu(tmp_path):
    model = TiedLM().to(emps.DEVICE)
    torch.save({"model": model.state_dict(), "step": 3}, tmp_path / "ckpt.pt")
    back = torch.load(tmp_path / "ckpt.pt")
    assert back["step"] == 3 and back["model"]["embed.weight"].device.type == "emps"
    on_cpu = torch.load(tmp_path / "ckpt.pt", map_location="cpu")["model"]["embed.weight"]
    assert type(on_cpu) is torch.Tensor and on_cpu.equal(model.embed.weight.detach().cpu())
    with pytest.raises(CourseError, match="'emps:1' does not exist"):
        torch.load(tmp_path / "ckpt.pt", map_location="emps:1")


def test_cpu_index_tensors_and_masks_index_device_tensors():
    x = torch.arange(12.0, device=emps.DEVICE).reshape(3, 4)
    assert x[torch.tensor([2, 0])].cpu().tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
    assert x[x.cpu() > 9].cpu().tolist() == [10, 11]
    assert x[torch.tensor([0, 2]), torch.tensor([1, 3])].cpu().tolist() == [1, 11]
    x[torch.tensor([True, False, False])] = -1.0
    x[x.cpu() > 10] = 0.0
    assert x.cpu().tolist() == [[-1, -1, -1, -1], [4, 5, 6, 7], [8, 9, 10, 0]]
    assert x.device.type == "emps"
    with pytest.raises(RuntimeError, match="same device"):
        x + torch.ones(4)  # indices only: other CPU tensors are still refused


def test_plain_cpu_code_is_left_alone_by_the_import():
    """DataLoader(pin_memory=True) and torch.utils.benchmark ask whether an accelerator is
    available: with the course imported they must take the path they take without it."""
    from torch.utils import benchmark
    from torch.utils.data import DataLoader, TensorDataset

    assert not torch.accelerator.is_available()
    loader = DataLoader(TensorDataset(torch.arange(6.0)), batch_size=4, pin_memory=True)
    with pytest.warns(UserWarning, match="pin_memory"):
        batches = [batch.tolist() for (batch,) in loader]
    assert batches == [[0, 1, 2, 3], [4, 5]]
    timer = benchmark.Timer("x + 1", globals={"x": torch.ones(3)})
    assert timer.timeit(3).mean > 0


def test_only_cpu_tensors_can_be_wrapped():
    with pytest.raises(CourseError, match=r"wraps a CPU torch.Tensor, not \[1, 2\] \(list\)"):
        emps.EmulatedTensor([1, 2])
    with pytest.raises(CourseError, match="not a tensor on emps:0"):
        emps.EmulatedTensor(torch.zeros(2, device=emps.DEVICE))


def test_a_host_copy_is_independent_of_the_device_tensor_both_ways():
    """x.cpu() may share memory copy-on-write (course.emps.device._to_copy): a write on
    either side must never show on the other, views copy only what they show, and a
    changed dtype is a real conversion."""
    x = torch.arange(12.0).reshape(3, 4).to(emps.DEVICE)
    host = x.cpu()
    x.add_(1)
    assert torch.equal(host, torch.arange(12.0).reshape(3, 4))
    host.mul_(0)
    assert torch.equal(x.cpu(), torch.arange(12.0).reshape(3, 4) + 1)
    view = x[::2, 1:]
    assert torch.equal(view.cpu(), (torch.arange(12.0).reshape(3, 4) + 1)[::2, 1:])
    assert view.cpu().untyped_storage().nbytes() == view.numel() * 4
    assert x.to("cpu", torch.int32).dtype == torch.int32


@pytest.mark.parametrize("kernel_writes", [True, False])
def test_a_host_copy_of_a_transposed_tensor_keeps_its_layout_and_its_values(kernel_writes):
    """The story's encoder weight (stride (1, rows)) is dense: its host copy may be shared
    copy-on-write too, with the strides a CPU copy keeps, and stays independent."""
    values = torch.arange(12.0).reshape(4, 3).t()
    x = values.to(emps.DEVICE)
    host, contiguous_host = x.cpu(), x.to("cpu", memory_format=torch.contiguous_format)
    assert host.stride() == values.cpu().stride() == (1, 3)
    assert contiguous_host.is_contiguous() and torch.equal(contiguous_host, values)
    if kernel_writes:
        x.mul_(x)  # an emulated kernel that works: gather, compute, copy back
    else:
        host.mul_(-1)
    assert torch.equal(host, values if kernel_writes else -values)
    assert torch.equal(x.cpu(), values * values if kernel_writes else values)


# Issue 37: whatever a learner's model does, the device runs it or says clearly why not.


def test_pickle_round_trips_device_tensors_and_parameters():
    import pickle

    base = torch.arange(12.0).reshape(3, 4).t().to(emps.DEVICE)
    for value in (base, base[1:, ::2], torch.ones(2, device="emps"), torch.tensor(3.0).to("emps")):
        back = pickle.loads(pickle.dumps(value))
        assert back.device.type == "emps" and back.stride() == value.stride()
        assert same_bits(back.cpu(), value.cpu())
    parameter = torch.nn.Parameter(torch.ones(2, device=emps.DEVICE))
    back = pickle.loads(pickle.dumps(parameter))
    assert isinstance(back, torch.nn.Parameter) and back.requires_grad


def test_torch_compile_is_refused_with_a_course_message():
    with pytest.raises(CourseError, match="torch.compile .* is not supported on the emulated"):
        torch.compile(lambda x: x + 1)(torch.ones(2, device=emps.DEVICE))


def test_a_meta_tensor_cannot_be_the_devices_memory():
    with pytest.raises(CourseError, match="not a tensor on meta"):
        emps.EmulatedTensor(torch.empty(2, device="meta"))


@pytest.mark.parametrize("profile", list(emps.PROFILES))
def test_in_place_metadata_ops_follow_the_memory(profile):
    """ATen calls as_strided_ itself (adaptive_avg_pool2d on channels_last input)."""
    with emps.use_profile(profile):
        x = torch.arange(6.0, device=emps.DEVICE).reshape(2, 3)
        x.t_()
        assert x.shape == (3, 2) and x.stride() == (1, 3)
        assert x.cpu().tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
        grown = torch.zeros(2, device=emps.DEVICE).resize_(3, 4).fill_(1.0)
        assert grown.shape == (3, 4) and grown.cpu().sum() == 12.0
        image = torch.randn(2, 3, 5, 5).contiguous(memory_format=torch.channels_last)
        pooled = torch.nn.functional.adaptive_avg_pool2d(image.to(emps.DEVICE), 1)
    expected = torch.nn.functional.adaptive_avg_pool2d(image, 1)
    assert pooled.stride() == expected.stride() and same_bits(pooled.cpu(), expected)


def test_recurrent_layers_run_in_inference_mode():
    torch.manual_seed(0)
    layers = [torch.nn.LSTM(3, 4), torch.nn.GRU(3, 4), torch.nn.LSTMCell(3, 4)]
    x = torch.randn(2, 3)
    for layer in layers:
        with torch.inference_mode():
            expected = layer(x)[0]
            on_device = layer.to(emps.DEVICE)(x.to(emps.DEVICE))[0]
        assert same_bits(on_device.cpu(), expected)


@pytest.mark.parametrize("profile", list(emps.PROFILES))
@pytest.mark.parametrize(
    "options",
    [{}, {"is_causal": True}, {"attn_mask": "float"}, {"dropout_p": 0.2}, {"scale": 0.3}],
)
def test_scaled_dot_product_attention_is_the_cpus_forward_and_backward(options, profile):
    def attend(device):
        torch.manual_seed(0)
        q, k, v = (torch.randn(2, 3, 9, 8) for _ in range(3))
        q = q.transpose(2, 3).contiguous().transpose(2, 3)  # a strided query
        kwargs = dict(options)
        if kwargs.get("attn_mask") == "float":
            kwargs["attn_mask"] = torch.randn(9, 9).to(device)
        leaves = [t.to(device).requires_grad_() for t in (q, k, v)]
        torch.manual_seed(1)
        out = torch.nn.functional.scaled_dot_product_attention(*leaves, **kwargs)
        out.square().sum().backward()
        return [out.detach().cpu()] + [t.grad.cpu() for t in leaves]

    with emps.use_profile(profile):
        on_device = attend(emps.DEVICE)
    for got, expected in zip(on_device, attend("cpu"), strict=True):
        assert same_bits(got, expected)


def test_a_cpu_tensor_mixed_into_a_recurrent_layer_is_refused():
    layer = torch.nn.LSTM(3, 4).to(emps.DEVICE)
    state = (torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))
    with pytest.raises(RuntimeError, match="same device"):
        layer(torch.randn(2, 1, 3, device=emps.DEVICE), state)


@pytest.mark.parametrize("reentrant", [False, True])
def test_activation_checkpointing_trains_as_on_the_cpu(reentrant):
    """checkpoint() saves and restores the device's random state and opens a disabled
    autocast block for the device when it recomputes: both must work (an error there ended
    the process, as any error in a backward pass on the device did)."""

    def step(device):
        torch.manual_seed(0)
        block = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.3), torch.nn.GELU())
        block.to(device)
        x = torch.randn(5, 4).to(device).requires_grad_()
        out = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=reentrant)
        out.square().sum().backward()
        return [x.grad.cpu(), block[0].weight.grad.cpu()]

    with emps.use_profile("fixed-macos14"):
        on_device = step(emps.DEVICE)
    for got, expected in zip(on_device, step("cpu"), strict=True):
        assert same_bits(got, expected)


def test_packed_sequences_and_ctc_keep_their_lengths_on_the_cpu():
    def run(device):
        torch.manual_seed(0)
        lstm = torch.nn.LSTM(4, 3).to(device)
        packed = torch.nn.utils.rnn.pack_padded_sequence(
            torch.randn(5, 2, 4).to(device), torch.tensor([5, 3])
        )
        padded, lengths = torch.nn.utils.rnn.pad_packed_sequence(lstm(packed)[0])
        log_probs = padded.log_softmax(2)
        targets = torch.tensor([[1, 2], [1, 1]]).to(device)
        loss = torch.nn.functional.ctc_loss(log_probs, targets, lengths, torch.tensor([2, 2]))
        loss.backward()
        assert packed.batch_sizes.device.type == lengths.device.type == "cpu"
        return [padded.detach().cpu(), loss.detach().cpu(), lstm.weight_hh_l0.grad.cpu()]

    with emps.use_profile("macos15"):
        on_device = run(emps.DEVICE)
    for got, expected in zip(on_device, run("cpu"), strict=True):
        assert same_bits(got, expected)


def test_the_device_module_answers_seeding_and_synchronising():
    torch.emps.manual_seed(5)
    assert torch.emps.initial_seed() == 5 and torch.emps.get_rng_state().dtype == torch.uint8
    torch.emps.synchronize()
    with torch.autocast("emps", enabled=False):  # what checkpoint() opens: allowed
        assert torch.ones(1, device=emps.DEVICE).dtype == torch.float32
    with pytest.raises(CourseError, match="autocast.*not emulated"):
        torch.autocast("emps", dtype=torch.float16)
