"""Notebook 09's exercises: tie the weights, find the suspects in the model and in its optimizer's
state, each checked on hidden models; feedback names what is true of the case an answer missed.
"""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
from collections.abc import Callable

import torch
from torch import nn

from course import emps
from course.casefile.checklist import checklist, parameter_findings, state_findings
from course.casefile.fixes import SCENARIOS, run_scenario
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    passed,
    ready_made,
    register,
    register_prediction,
)
from course.model.sae import TopKSAE

# --- hidden models, built without the learner's global RNG ------------------------------------


def _batch(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))


def _layer(cls: type[nn.Module], *args: int) -> nn.Module:
    """An nn.Linear or nn.Conv2d filled from a private generator instead of its own init, which
    draws from the global RNG: checking an answer must not change the learner's random numbers."""
    layer = nn.utils.skip_init(cls, *args)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(_batch(*p.shape))
    return layer


# --- 09.tie_weights ------------------------------------------------------------------------------

# (shape, dtype, device) of the hidden decoder weights: a square one (a non-transpose of the right
# shape), a float16 one (a copy must keep the dtype), one on the emulated device (and the device),
# and a one-row weight (a probe's nn.Linear(n, 1)) and a one-column one, whose transposes are
# contiguous already: a copy made only when needed (contiguous()) is no copy there
DECODERS = (
    ((4, 6), torch.float32, "cpu"),
    ((8, 3), torch.float32, "cpu"),
    ((5, 5), torch.float32, "cpu"),
    ((6, 4), torch.float16, "cpu"),
    ((3, 7), torch.float32, emps.DEVICE),
    ((1, 6), torch.float32, "cpu"),
    ((5, 1), torch.float32, emps.DEVICE),
)


def _names_used(fn: Callable) -> set[str]:
    """The attribute and function names in the learner's source ({"T", "clone"}...), if readable;
    each attribute also as ".T", so that a method is not confused with a variable named t."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set()
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return attributes | names | {f".{attr}" for attr in attributes}


# calls that return their input, or a view of it, when they need not copy: (attribute in the
# source, as the message names it); the message names every one the learner used
VIEW_CALLS = (
    ("T", "`.T`"),
    ("t", "`.t()`"),
    ("mT", "`.mT`"),
    ("transpose", "`.transpose()`"),
    ("permute", "`.permute()`"),
    ("reshape", "`.reshape()`"),
    ("view", "`.view()`"),
    ("flatten", "`.flatten()`"),
)


def _view_message(used: set[str], encoder: torch.Tensor, decoder: torch.Tensor) -> str:
    """Why a result that shares the decoder's memory is wrong, naming the calls that made it."""
    shared = (
        f"a view of the decoder's memory (stride {encoder.stride()}), not a tensor of its own: "
        "training the encoder would move the decoder too"
    )
    if {".to", "contiguous_format"} <= used:
        return (
            "`.to(memory_format=torch.contiguous_format)` returns the tensor itself when dtype "
            "and device match and it judges the layout to be the one asked for (for a 2-D "
            f"tensor it always does): your encoder is {shared}"
        )
    calls = [shown for name, shown in VIEW_CALLS if f".{name}" in used]
    named = " and ".join(filter(None, [", ".join(calls[:-1]), *calls[-1:]]))
    if encoder.is_contiguous():  # only a transpose with a size-1 dimension is both
        made = (
            "`.contiguous()` returns such a tensor as it is"
            if ".contiguous" in used
            else f"{named or 'your code'} kept it without a copy"
        )
        return (
            f"the transpose of a {list(decoder.shape)} weight is contiguous already (a size-1 "
            f"dimension's stride does not count), and {made}: your encoder is {shared}"
        )
    if not calls:
        return f"your encoder is {shared}"
    return f"{named} {'returns' if len(calls) == 1 else 'return'} {shared}"


# (names in the learner's source, why a copy made with them kept the transposed strides): the
# first that matches names the cause
LIKES = ("empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like")
COPY_CAUSES = (
    (
        {"clone"},
        "clone() keeps the strides of what it copies (memory_format=torch.preserve_format)",
    ),
    *(
        ({like}, f"{like}() takes the strides of its argument, so copy_ fills a transposed tensor")
        for like in LIKES
    ),
    ({"empty_strided", "as_strided"}, "you gave it the transpose's strides yourself"),
    ({"deepcopy", "copy"}, "a (deep)copy keeps the strides of what it copies"),
)


def _copy_message(used: set[str], stride: tuple[int, ...]) -> str:
    """Why a copy with the transposed strides is wrong, naming the copying call used."""
    why = next(
        (why for names, why in COPY_CAUSES if names & used),
        "your copy kept the transposed strides (an elementwise result such as w.T * 1 follows "
        "its input's layout too)",
    )
    return (
        f"your encoder has its own memory but stride {stride}: {why}; Adam's state would "
        "inherit that layout"
    )


def _check_tie(fn) -> Verdict:
    used = _names_used(fn)
    for shape, dtype, device in DECODERS:
        decoder = _layer(nn.Linear, shape[1], shape[0]).weight.detach().to(device, dtype)
        before = (decoder.shape, decoder.stride(), decoder.cpu().clone())
        where = "" if device == "cpu" else f" on {device}"
        label = f"for a {_dtype_name(dtype)} decoder weight of shape {list(shape)}{where}"
        try:
            encoder = fn(decoder)
        except NotImplementedError:
            raise  # the scaffold's own: `check` reports it as not attempted
        except Exception as exc:
            return failed(f"{label}: tie raised {type(exc).__name__}: {exc}")
        if (decoder.shape, decoder.stride()) != before[:2] or not torch.equal(
            decoder.cpu(), before[2]
        ):
            return failed(
                f"{label}: tie changed the decoder weight itself (t_(), transpose_() and "
                "`.data =` work in place): the decoder must keep its layout and values; return "
                "a new tensor"
            )
        problem = _tie_problem(encoder, decoder, used)
        if problem is not None:
            return failed(f"{label}: {problem}")
    return passed("a contiguous copy of the transpose: Adam's state will be contiguous too")


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _tie_problem(encoder: object, decoder: torch.Tensor, used: set[str]) -> str | None:
    """What is wrong with one encoder made from one decoder weight (None: nothing)."""
    if not isinstance(encoder, torch.Tensor):
        return f"tie returned {type(encoder).__name__}, not a tensor"
    if encoder.shape != decoder.T.shape:
        return f"your encoder's shape {list(encoder.shape)} is not the transpose's"
    made = (
        " (torch.empty and torch.tensor make float32 CPU tensors unless given dtype= and device=)"
        if used & {"empty", "tensor", "zeros"}
        else ""
    )
    if encoder.device != decoder.device:
        return (
            f"your encoder is on {encoder.device}, the decoder on {decoder.device}: make the "
            f"copy where the weight lives{made}"
        )
    if encoder.dtype != decoder.dtype:
        mps = ", and MPS has no float64" if encoder.dtype == torch.float64 else ""
        return (
            f"your encoder is {_dtype_name(encoder.dtype)}, the decoder "
            f"{_dtype_name(decoder.dtype)}: a weight keeps its dtype (Adam's state would follow "
            f"the new dtype{mps}){made}"
        )
    if not torch.equal(encoder.cpu(), decoder.T.cpu()):
        return (
            "your encoder has the transpose's shape but other values: a reshape or view keeps "
            "the order of the elements, a transpose swaps rows and columns"
        )
    if _same_memory(encoder, decoder):
        return _view_message(used, encoder, decoder)
    if not encoder.is_contiguous():
        return _copy_message(used, encoder.stride())
    return None


def _same_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether `a` is a view of `b`'s memory: one storage (the emulated device has them too, so a
    view through detach(), which leaves no _base behind, is seen there as well)."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _tie_by_data():
    def tie(decoder_weight):  # rewrites the decoder's own .data, then hands it back
        decoder_weight.data = decoder_weight.T.contiguous()
        return decoder_weight

    return tie


def _reference_tie():
    def tie(decoder_weight):  # contiguous() would return a [1, n] weight's transpose as it is
        return decoder_weight.T.clone(memory_format=torch.contiguous_format)

    return tie


register(
    Exercise(
        "09.tie_weights",
        "Write tie(decoder_weight) -> the encoder's initial weight: the decoder's transpose, as a "
        "contiguous tensor of its own, whatever the weight's shape (decoder weights are "
        "nn.Linear weights, so contiguous).",
        _check_tie,
        "`.T` is a view; `.clone()` keeps its strides; `.contiguous()` copies a non-contiguous "
        "tensor into row-major order but returns a contiguous one as it is, while "
        "`clone(memory_format=...)` always copies.",
        _reference_tie,
        (
            lambda: lambda w: w.T.clone(),
            lambda: lambda w: w.T,
            lambda: lambda w: w.t(),
            lambda: lambda w: torch.empty_like(w.T).copy_(w.T),
            lambda: lambda w: w.reshape(w.shape[1], w.shape[0]).clone(),
            lambda: lambda w: w.clone(),
            lambda: lambda w: w.T.contiguous().double(),
            lambda: lambda w: torch.empty(w.shape[1], w.shape[0]).copy_(w.T),
            lambda: lambda w: torch.empty(w.shape[1], w.shape[0], dtype=w.dtype).copy_(w.T),
            lambda: lambda w: torch.zeros_like(w.T).copy_(w.T),
            lambda: lambda w: w.T * 1.0,
            lambda: lambda w: w.t_().contiguous(),
            _tie_by_data,
            lambda: lambda w: w.T.float().contiguous(),
            lambda: lambda w: copy.deepcopy(w.T),
            lambda: lambda w: torch.empty_strided(w.T.shape, w.T.stride()).copy_(w.T),
            lambda: lambda w: torch.from_numpy(w.numpy().T.copy()),
            lambda: lambda w: w.T.contiguous(),
            lambda: lambda w: w.T.to(memory_format=torch.contiguous_format),
            lambda: lambda w: w.T.reshape(w.shape[1], w.shape[0]),
            lambda: lambda w: w.T.flatten().view(w.shape[1], w.shape[0]),
        ),
    )
)


# --- 09.suspects ---------------------------------------------------------------------------------


class _Scaled(nn.Module):
    """A linear layer with a per-feature scale kept as a buffer (broadcast with stride 0).

    Not persistent, as a cache often is: it is not in state_dict(), yet the model owns it."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = _layer(nn.Linear, 4, 3)
        self.register_buffer("scale", torch.ones(1, 3).expand(4, 3), persistent=False)


class _Counted(nn.Module):
    """A linear layer that counts, per input and output feature, how often each fired: an
    integer buffer, written in place at every forward, made (like the story's encoder) from a
    transpose."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = _layer(nn.Linear, 4, 3)
        self.register_buffer("fired", torch.zeros(4, 3, dtype=torch.long).T)


def _sliced() -> nn.Module:
    layer = _layer(nn.Linear, 2, 4)
    layer.weight = nn.Parameter(_batch(4, 6)[:, :2])  # stride (6, 1): last stride 1
    return layer


def _strided_bias() -> nn.Module:
    layer = _layer(nn.Linear, 4, 4)
    rows = torch.arange(24.0).reshape(6, 4)
    layer.weight = nn.Parameter(rows[2:])  # whole rows: contiguous, at storage offset 8
    layer.bias = nn.Parameter(torch.arange(8.0)[::2])  # every other element: stride (2,)
    return layer


def _channels_last(last_kernel: int = 3) -> nn.Module:
    net = nn.Sequential(_layer(nn.Conv2d, 3, 8, 3), nn.ReLU(), _layer(nn.Conv2d, 8, 4, last_kernel))
    return net.to(memory_format=torch.channels_last)  # how conv nets get it in practice


def _healthy() -> nn.Module:
    return nn.Sequential(
        _layer(nn.Linear, 4, 8), nn.BatchNorm1d(8), nn.ReLU(), _layer(nn.Linear, 8, 2)
    )


# label -> (model maker, expected names, why it matters)
SUSPECT_CASES: dict[str, tuple[Callable[[], nn.Module], list[str], str]] = {
    "the story's SAE": (
        lambda: TopKSAE(d_model=8, n_features=16, k=4, init="transposed"),
        ["encoder.weight"],
        "the encoder was initialised as a clone of a transposed view: memory of its own, which "
        "it fills (no view, no gaps), and still not contiguous, since clone() kept the strides",
    ),
    f"the story's SAE on the emulated device ({emps.DEVICE})": (
        lambda: TopKSAE(d_model=8, n_features=16, k=4, init="transposed").to(emps.DEVICE),
        ["encoder.weight"],
        "the story's model lived on a device (MPS), and a checklist is run where the model "
        "lives: ask the tensors themselves, on any device",
    ),
    "a Linear whose weight is a [:, :2] slice": (
        _sliced,
        ["weight"],
        "a column slice keeps its parent's row stride: not contiguous, though it is no "
        "transpose and its last stride is 1",
    ),
    "a conv net moved to channels_last": (
        _channels_last,
        ["0.weight", "2.weight"],
        "channels_last stores a conv weight channels innermost: contiguous in that memory "
        "format, but not is_contiguous(), the row-major test the story's kernels made",
    ),
    "a conv net in channels_last whose last conv is 1x1": (
        lambda: _channels_last(last_kernel=1),
        ["0.weight"],
        "a 1x1 kernel's size-1 dimensions do not count, whatever their strides: is_contiguous() "
        "ignores them, so that weight is contiguous in both layouts",
    ),
    "a Linear whose bias is every other element of a vector": (
        _strided_bias,
        ["bias"],
        "a vector with stride 2 is not contiguous, a block of whole rows is (its storage offset "
        "does not matter)",
    ),
    "a module with an expanded buffer": (
        _Scaled,
        ["scale"],
        "buffers are written in place too (BatchNorm's running statistics), and a stride-0 one is "
        "not contiguous",
    ),
    "a module with an integer buffer": (
        _Counted,
        ["fired"],
        "a counter is written in place too (as BatchNorm's num_batches_tracked is), and an "
        "integer tensor has strides like any other: check every dtype",
    ),
    "a model with nothing wrong": (_healthy, [], "a healthy model must give an empty list"),
    "the fixed SAE": (
        lambda: TopKSAE(d_model=8, n_features=16, k=4, init="contiguous"),
        [],
        "its encoder was made contiguous at init",
    ),
}


# the course's own functions that answer 09.suspects and 09.state_suspects: calling one is borrowing
COURSE_CHECKS = {
    "checklist": checklist,
    "parameter_findings": parameter_findings,
    "state_findings": state_findings,
}


def _borrowed(used: list[str]) -> Verdict:
    return failed(
        f"your answer calls {used[0]}(), part of the course's own checklist: write the rule "
        "yourself, from the tensors"
    )


def _check_suspects(fn) -> Verdict:
    for label, (make, expected, why) in SUSPECT_CASES.items():
        model = make()
        with ready_made(COURSE_CHECKS) as used:
            try:
                answer = fn(model)
            except NotImplementedError:
                raise  # the scaffold's own: `check` reports it as not attempted
            except Exception as exc:
                device = next(model.parameters()).device
                where = f"; {why}" if device.type != "cpu" else ""
                return failed(f"for {label}, suspects raised {type(exc).__name__}: {exc}{where}")
        if used:
            return _borrowed(used)
        if not isinstance(answer, (list, tuple, set)):
            return failed(
                f"for {label}, suspects(model) returned {type(answer).__name__}: return a list "
                "of names",
                answer,
                "a list",
            )
        if not all(isinstance(name, str) for name in answer):
            return failed(f"for {label}, return the tensors' names (strings), not the tensors")
        twice = sorted({name for name in answer if list(answer).count(name) > 1})
        if twice:
            return failed(
                f"for {label}, you listed {twice[0]} more than once: name each tensor once "
                "(model.named_parameters() and named_buffers() never repeat a name)"
            )
        if sorted(answer) != expected:
            problem = _suspects_problem(model, set(answer), expected)
            return failed(f"for {label}: {problem}; {why}")
    return passed("you find every non-contiguous tensor the model writes: the first thing to check")


def _suspects_problem(model: nn.Module, yours: set[str], expected: list[str]) -> str:
    """Which name is wrong, and what that tensor is (kind, submodule, stride, .grad)."""
    tensors = {
        **{n: ("parameter", p) for n, p in model.named_parameters()},
        **{n: ("buffer", b) for n, b in model.named_buffers()},
    }
    unknown = sorted(yours - tensors.keys())
    if unknown:
        return (
            f"{unknown[0]!r} is not a tensor of this model: take the names from the model you "
            "are given"
        )
    extra = sorted(yours - set(expected))
    if extra:
        kind, tensor = tensors[extra[0]]
        offset = tensor.storage_offset()
        at = f", storage offset {offset}" if offset else ""
        return f"{extra[0]} is a contiguous {kind} (stride {tensor.stride()}{at})"
    name = sorted(set(expected) - yours)[0]
    kind, tensor = tensors[name]
    module, _, _ = name.rpartition(".")
    where = f" of the submodule {module!r}" if module else ""
    grad = " with no .grad (never trained)" if kind == "parameter" and tensor.grad is None else ""
    owner = model.get_submodule(module)
    if kind == "buffer" and name.rpartition(".")[2] in owner._non_persistent_buffers_set:
        kind = "buffer registered with persistent=False (so not in state_dict())"
    return (
        f"you missed {name}, a {kind}{where}{grad}, shape {list(tensor.shape)}, stride "
        f"{tensor.stride()}, not contiguous"
    )


def _by_row_major_strides():
    def suspects(model):  # the row-major strides written out, compared with the tensor's
        def row_major(shape):
            strides = [1]
            for size in reversed(shape[1:]):
                strides.insert(0, strides[0] * size)
            return tuple(strides)

        tensors = [*model.named_parameters(), *model.named_buffers()]
        return [name for name, t in tensors if t.dim() and t.stride() != row_major(t.shape)]

    return suspects


def _reference_suspects():
    def suspects(model):
        tensors = [*model.named_parameters(), *model.named_buffers()]
        return [name for name, t in tensors if not t.is_contiguous()]

    return suspects


register(
    Exercise(
        "09.suspects",
        "Write suspects(model) -> the names of the model's non-contiguous parameters and buffers "
        "(every tensor the model or its optimizer updates in place).",
        _check_suspects,
        "model.named_parameters() and model.named_buffers() yield (name, tensor) pairs; a tensor "
        "knows whether it is_contiguous(), which strides alone do not tell you.",
        _reference_suspects,
        (
            lambda: lambda m: [n for n, p in m.named_parameters() if p.stride()[-1] != 1],
            lambda: (
                lambda m: [
                    n
                    for n, p in m.named_parameters()
                    if list(p.stride()) != sorted(p.stride())[::-1]
                ]
            ),
            lambda: lambda m: [n for n, p in m.named_parameters() if not p.is_contiguous()],
            lambda: lambda m: [n for n, p in m.named_parameters() if p.dim() > 1],
            lambda: (
                lambda m: [
                    n
                    for n, p in m.named_parameters()
                    if p.grad is not None and not p.is_contiguous()
                ]
            ),
            lambda: lambda m: ["encoder.weight"],
            lambda: (
                lambda m: [
                    n
                    for n, t in [
                        *m.named_parameters(recurse=False),
                        *m.named_buffers(recurse=False),
                    ]
                    if not t.is_contiguous()
                ]
            ),
            lambda: (
                lambda m: [
                    n
                    for n, t in [*m.named_parameters(), *m.named_buffers()]
                    if t.dim() == 2 and t.stride(0) < t.stride(1)
                ]
            ),
            lambda: lambda m: [f.target for f in checklist(m) if f.check == "contiguity"],
            lambda: lambda m: [f.target for f in parameter_findings(m, True) if "not" in f.message],
            lambda: lambda m: [n for n, t in m.state_dict().items() if not t.is_contiguous()],
            _by_row_major_strides,
            lambda: (
                lambda m: [
                    n
                    for n, t in [*m.named_parameters(), *m.state_dict().items()]
                    if not t.is_contiguous()
                ]
            ),
            lambda: (
                lambda m: [
                    n
                    for n, t in [*m.named_parameters(), *m.named_buffers()]
                    if t.dim() > 1 and not t.is_contiguous()
                ]
            ),
            lambda: (
                lambda m: [
                    n
                    for n, t in [*m.named_parameters(), *m.named_buffers()]
                    if t.storage_offset() != 0 or not t.is_contiguous()
                ]
            ),
            lambda: lambda m: [n for n, t in _tensors(m) if t._base is not None],
            lambda: (
                lambda m: [
                    n
                    for n, t in _tensors(m)
                    if t.untyped_storage().nbytes() != t.numel() * t.element_size()
                ]
            ),
            lambda: (
                lambda m: [
                    n
                    for n, t in _tensors(m)
                    if not t.is_contiguous()
                    and not t.is_contiguous(memory_format=torch.channels_last)
                ]
            ),
            lambda: (
                lambda m: [
                    n for n, t in _tensors(m) if t.is_floating_point() and not t.is_contiguous()
                ]
            ),
            lambda: (
                lambda m: [
                    n for n, t in _tensors(m) if not t.detach().numpy().flags["C_CONTIGUOUS"]
                ]
            ),
        ),
    )
)


def _tensors(model: nn.Module) -> list[tuple[str, torch.Tensor]]:
    """The model's named parameters and buffers, as the wrong answers above take them."""
    return [*model.named_parameters(), *model.named_buffers()]


# --- 09.state_suspects ---------------------------------------------------------------------------


def _trained(model: nn.Module, optimizer: torch.optim.Optimizer, batch: torch.Tensor, steps=1):
    """(model, optimizer) after `steps` optimizer steps on one batch, so the state exists."""
    for _ in range(steps):
        optimizer.zero_grad()
        model(batch).square().mean().backward()
        optimizer.step()
    return model, optimizer


def _story_adam(**options) -> tuple[nn.Module, torch.optim.Optimizer]:
    model = TopKSAE(d_model=8, n_features=16, k=4, init="transposed")
    return _trained(model, torch.optim.Adam(model.parameters(), lr=1e-3, **options), _batch(16, 8))


def _made_contiguous_later() -> tuple[nn.Module, torch.optim.Optimizer]:
    model, optimizer = _story_adam()
    model.encoder.weight.data = model.encoder.weight.data.contiguous()  # a "fix" after step 1
    return _trained(model, optimizer, _batch(16, 8))  # its new gradient is contiguous too


class _PerHead(nn.Module):
    """Per-head projections stored heads-second and swapped to the front: stride (3, 6, 1).
    Named `heads`, not `weight`: a parameter's name says nothing about its layout."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.Parameter(_batch(4, 2, 3).transpose(0, 1))  # [heads, in, out]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bi,hio->bho", x, self.heads)


def _per_head_adam() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = _PerHead()
    return _trained(model, torch.optim.Adam(model.parameters(), lr=1e-3), _batch(5, 4))


def _sgd_momentum() -> tuple[nn.Module, torch.optim.Optimizer]:
    layer = _layer(nn.Linear, 3, 5)
    layer.weight = nn.Parameter(_batch(3, 5).T)  # the story's init, on a plain Linear
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
    return _trained(layer, optimizer, _batch(4, 3), steps=2)


def _two_groups() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = TopKSAE(d_model=8, n_features=16, k=4, init="transposed")
    groups = [
        {"params": list(model.decoder.parameters())},
        {"params": list(model.encoder.parameters()), "lr": 1e-4},
    ]
    return _trained(model, torch.optim.Adam(groups, lr=1e-3), _batch(16, 8))


def _rmsprop_channels_last() -> tuple[nn.Module, torch.optim.Optimizer]:
    net = _channels_last()
    optimizer = torch.optim.RMSprop(net.parameters(), lr=1e-3, momentum=0.9, centered=True)
    return _trained(net, optimizer, _batch(2, 3, 8, 8))


def _encoder_frozen_after_a_step() -> tuple[nn.Module, torch.optim.Optimizer]:
    model, optimizer = _story_adam()
    model.encoder.requires_grad_(False)  # fine-tuning the decoder alone from here
    return model, optimizer


def _adagrad_before_its_first_step() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = TopKSAE(d_model=8, n_features=16, k=4, init="transposed")
    return model, torch.optim.Adagrad(model.parameters(), lr=1e-2)


def _adam_on_a_slice() -> tuple[nn.Module, torch.optim.Optimizer]:
    layer = _sliced()  # weight stride (6, 1): not contiguous, and not dense either
    return _trained(layer, torch.optim.Adam(layer.parameters(), lr=1e-3), _batch(4, 2))


def _tied_by_a_view() -> tuple[nn.Module, torch.optim.Optimizer]:
    """A square SAE whose encoder weight is the decoder's memory itself (09.tie_weights' trap):
    two weights of one shape, at one address."""
    model = TopKSAE(d_model=8, n_features=8, k=4, init="contiguous")
    model.encoder.weight = nn.Parameter(model.decoder.weight.detach().T)
    return _trained(model, torch.optim.Adam(model.parameters(), lr=1e-3), _batch(16, 8))


def _before_the_first_step() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = TopKSAE(d_model=8, n_features=16, k=4, init="transposed")
    return model, torch.optim.Adam(model.parameters(), lr=1e-3)


def _fixed_adam() -> tuple[nn.Module, torch.optim.Optimizer]:
    model = TopKSAE(d_model=8, n_features=16, k=4, init="contiguous")
    return _trained(model, torch.optim.Adam(model.parameters(), lr=1e-3), _batch(16, 8))


ADAM_PAIRS = [("encoder.weight", "exp_avg"), ("encoder.weight", "exp_avg_sq")]
# label -> (model and optimizer maker, expected pairs, why it matters)
STATE_CASES: dict[str, tuple[Callable[[], tuple], list[tuple[str, str]], str]] = {
    "the story's SAE after one Adam step": (
        _story_adam,
        ADAM_PAIRS,
        "Adam made each state tensor with zeros_like(param), which keeps the parameter's layout",
    ),
    "the story's SAE, its encoder weight made contiguous after the first step, then one more": (
        _made_contiguous_later,
        ADAM_PAIRS,
        "the parameter (and so its new gradient) is contiguous now, but its state was made from "
        "the old layout and stays so: check the state tensors themselves",
    ),
    "SGD with momentum on a transposed Linear weight, after two steps": (
        _sgd_momentum,
        [("weight", "momentum_buffer")],
        "SGD keeps a momentum_buffer (a clone of the first gradient, in the weight's layout): "
        "read the keys of optimizer.state[p] instead of expecting Adam's",
    ),
    "Adam with two param groups, the encoder in the second": (
        _two_groups,
        ADAM_PAIRS,
        "every param group counts (optimizer.state holds them all)",
    ),
    "centered RMSprop with momentum on a conv net in channels_last, after one step": (
        _rmsprop_channels_last,
        [
            (name, key)
            for name in ("0.weight", "2.weight")
            for key in ("square_avg", "momentum_buffer", "grad_avg")
        ],
        "each RMSprop state tensor keeps the channels_last layout of a 4-D weight: no transpose, "
        "still not contiguous; and centered=True and momentum add their own keys",
    ),
    "Adam on a 3-D per-head projection whose first two dimensions were swapped": (
        _per_head_adam,
        [("heads", "exp_avg"), ("heads", "exp_avg_sq")],
        "its last stride is 1 and its first is not the largest: ask each tensor whether it "
        "is_contiguous() rather than guess from one stride or its parameter's name (this one "
        "is not called weight)",
    ),
    "Adam with amsgrad=True on the story's SAE": (
        lambda: _story_adam(amsgrad=True),
        [*ADAM_PAIRS, ("encoder.weight", "max_exp_avg_sq")],
        "amsgrad adds max_exp_avg_sq: take every tensor in the state, not a list of known keys",
    ),
    "the story's SAE after one Adam step, its encoder then frozen (requires_grad_(False))": (
        _encoder_frozen_after_a_step,
        ADAM_PAIRS,
        "freezing keeps the state (Adam skips a parameter with no .grad, but forgets nothing), "
        "and unfreezing it writes into the same tensors again: it counts",
    ),
    "the story's SAE with Adagrad, before its first step": (
        _adagrad_before_its_first_step,
        [("encoder.weight", "sum")],
        "Adagrad makes its state in its constructor (full_like(param), the parameter's layout), "
        "before any step or gradient: read the state that is there, whatever has run",
    ),
    "Adam on a Linear whose weight is a [:, :2] slice, after one step": (
        _adam_on_a_slice,
        [],
        "zeros_like keeps a layout only when it is dense, and a slice with gaps is not: the "
        "state of this non-contiguous weight is contiguous, so ask the state tensors, not the "
        "parameter",
    ),
    "Adam on a square SAE whose encoder weight is a view of the decoder's, after one step": (
        _tied_by_a_view,
        ADAM_PAIRS,
        "its encoder and decoder weights have one shape and one data pointer: only the tensor "
        "itself tells them apart",
    ),
    "the story's SAE before its first Adam step": (
        _before_the_first_step,
        [],
        "Adam makes its state at the first step: there is no state tensor yet to be wrong",
    ),
    "the fixed SAE after one Adam step": (
        _fixed_adam,
        [],
        "contiguous parameters get contiguous state",
    ),
}


def _state_problem(yours: list, expected: list, names: set[str]) -> str:
    """Which pair is wrong: pairs reversed, names mixed up or made up, a pair missing, or extra."""
    twice = sorted({pair for pair in yours if yours.count(pair) > 1})
    if twice:
        return f"you listed {twice[0]} more than once: name each state tensor once"
    if yours and sorted((k, n) for n, k in yours) == expected:
        return "your pairs are (state key, parameter name): put the parameter's name first"
    unknown = sorted({n for n, _ in yours} - names)
    if unknown:
        return (
            f"{unknown[0]!r} is not the name of a parameter of this model: use the full names "
            "from model.named_parameters()"
        )
    if yours and sorted(k for _, k in yours) == sorted(k for _, k in expected):
        return (
            "the right state tensors under the wrong names: optimizer.state is keyed by the "
            "parameter tensor itself, so find each one's name by identity, not by position, "
            "shape or address"
        )
    missing = [pair for pair in expected if pair not in yours]
    if missing:
        return f"you missed {missing[0]}"
    extra = [pair for pair in yours if pair not in expected]
    return f"{extra[0]} is not a non-contiguous tensor in the optimizer's state"


def _check_state_suspects(fn) -> Verdict:
    if getattr(fn, "__wrapped__", fn) in COURSE_CHECKS.values():
        return failed(
            f"{fn.__name__} is the course's own checklist: write the rule yourself, from "
            "optimizer.state"
        )
    for label, (make, expected, why) in STATE_CASES.items():
        model, optimizer = make()
        with ready_made(COURSE_CHECKS) as used:
            try:
                answer = fn(model, optimizer)
            except NotImplementedError:
                raise  # the scaffold's own: `check` reports it as not attempted
            except Exception as exc:
                raised = f"state_suspects raised {type(exc).__name__}: {exc}"
                return failed(f"for {label}, {raised}; {why}")
        if used:
            return _borrowed(used)
        pairs = isinstance(answer, (list, tuple, set)) and all(
            isinstance(p, tuple) and len(p) == 2 and all(isinstance(s, str) for s in p)
            for p in answer
        )
        if not pairs:
            return failed(
                f"for {label}, return a list of (parameter name, state key) pairs such as "
                "('weight', 'exp_avg')",
                repr(answer)[:80],
            )
        yours = sorted(answer)
        if yours != sorted(expected):
            names = {name for name, _ in model.named_parameters()}
            return failed(f"for {label}: {_state_problem(yours, sorted(expected), names)}; {why}")
    return passed(
        f"right on {len(STATE_CASES)} hidden models and optimizers: the state is written in "
        "place every step"
    )


def _reference_state_suspects():
    def state_suspects(model, optimizer):
        names = {p: name for name, p in model.named_parameters()}  # keyed by the tensor itself
        return [
            (names[p], key)
            for p, state in optimizer.state.items()
            for key, value in state.items()
            if isinstance(value, torch.Tensor) and not value.is_contiguous()
        ]

    return state_suspects


def _state_with(keys: tuple[str, ...] | None = None, groups: int | None = None):
    """The reference with one shortcut: a fixed list of keys, or only the first param groups."""

    def state_suspects(model, optimizer):
        names = {p: name for name, p in model.named_parameters()}
        held = [p for group in optimizer.param_groups[:groups] for p in group["params"]]
        return [
            (names[p], key)
            for p in held
            for key, value in optimizer.state[p].items()
            if (keys is None or key in keys)
            and isinstance(value, torch.Tensor)
            and not value.is_contiguous()
        ]

    return state_suspects


def _from_the_parameters():
    def state_suspects(model, optimizer):  # the parameters' layout, not the state's
        return [
            (name, key)
            for name, p in model.named_parameters()
            if not p.is_contiguous()
            for key in optimizer.state[p]
            if key != "step"
        ]

    return state_suspects


def _from_the_gradients():
    def state_suspects(model, optimizer):  # the gradient's layout, not the state's
        return [
            (name, key)
            for name, p in model.named_parameters()
            if p.grad is not None and not p.grad.is_contiguous()
            for key in optimizer.state[p]
            if key != "step"
        ]

    return state_suspects


KNOWN_KEYS = ("exp_avg", "exp_avg_sq", "momentum_buffer", "square_avg")  # Adam's, SGD's, RMSprop's


def _from_the_last_stride():
    def state_suspects(model, optimizer):  # "transposed or channels_last": the last stride is not 1
        names = {p: name for name, p in model.named_parameters()}
        return [
            (names[p], key)
            for p, state in optimizer.state.items()
            for key, value in state.items()
            if value.dim() and value.stride()[-1] != 1 and 0 not in value.stride()
        ]

    return state_suspects


def _named_by_module():
    def state_suspects(model, optimizer):  # the module's name instead of the parameter's
        names = {
            p: module_name
            for module_name, module in model.named_modules()
            for p in module.parameters(recurse=False)
        }
        return [(names[p], key) for p, key in _reference_pairs(optimizer)]

    return state_suspects


def _reference_pairs(optimizer):
    return [
        (p, key)
        for p, state in optimizer.state.items()
        for key, value in state.items()
        if not value.is_contiguous()
    ]


def _with_a_gradient():
    def state_suspects(model, optimizer):  # only the parameters that have a .grad
        return [
            (name, key)
            for name, p in model.named_parameters()
            if p.grad is not None
            for key, value in optimizer.state[p].items()
            if not value.is_contiguous()
        ]

    return state_suspects


def _named_by(key: Callable[[torch.Tensor], object]):
    """The reference, but naming each parameter by `key` (its shape, its address) instead of
    by the tensor itself."""

    def state_suspects(model, optimizer):
        names = {key(p): name for name, p in model.named_parameters()}
        return [(names[key(p)], k) for p, k in _reference_pairs(optimizer)]

    return state_suspects


def _parameter_or_state():
    def state_suspects(model, optimizer):  # belt and braces: the parameter's layout, or its state's
        return [
            (name, key)
            for name, p in model.named_parameters()
            for key, value in optimizer.state[p].items()
            if value.dim() and not (p.is_contiguous() and value.is_contiguous())
        ]

    return state_suspects


def _trainable_only():
    def state_suspects(model, optimizer):  # the idiom for "trainable parameters"
        return [
            (name, key)
            for name, p in model.named_parameters()
            if p.requires_grad
            for key, value in optimizer.state[p].items()
            if not value.is_contiguous()
        ]

    return state_suspects


def _weights_only():
    def state_suspects(model, optimizer):  # "only weight matrices can be non-contiguous"
        names = {p: name for name, p in model.named_parameters()}
        return [
            (names[p], key) for p, key in _reference_pairs(optimizer) if names[p].endswith("weight")
        ]

    return state_suspects


def _named_by_position():
    def state_suspects(model, optimizer):
        return [
            (name, key)
            for (name, _), state in zip(
                model.named_parameters(), optimizer.state.values(), strict=False
            )
            for key, value in state.items()
            if not value.is_contiguous()
        ]

    return state_suspects


def _transposes_only():
    def state_suspects(model, optimizer):
        names = {p: name for name, p in model.named_parameters()}
        return [
            (names[p], key)
            for p, state in optimizer.state.items()
            for key, value in state.items()
            if value.dim() == 2 and value.stride(0) < value.stride(1)
        ]

    return state_suspects


register(
    Exercise(
        "09.state_suspects",
        "Write state_suspects(model, optimizer) -> the (parameter name, state key) pairs of "
        "every non-contiguous tensor in the optimizer's state, such as ('weight', 'exp_avg'): "
        "the tensors the optimizer writes in place at every step.",
        _check_state_suspects,
        "optimizer.state maps each parameter tensor to a dict of its state ({'step': ..., "
        "'exp_avg': ...}); model.named_parameters() gives the names, and a tensor is a "
        "dictionary key by identity.",
        _reference_state_suspects,
        (
            lambda: _state_with(keys=("exp_avg", "exp_avg_sq")),
            _from_the_parameters,
            lambda: _state_with(groups=1),
            _named_by_position,
            lambda: _state_with(keys=("exp_avg_sq",)),
            _transposes_only,
            lambda: checklist,
            lambda: lambda m, o: [tuple(f.target.split()) for f in state_findings(m, o, True)],
            _from_the_gradients,
            lambda: lambda m, o: [(key, name) for name, key in _reference_state_suspects()(m, o)],
            lambda: lambda m, o: 2 * _reference_state_suspects()(m, o),
            lambda: _state_with(keys=(*KNOWN_KEYS, "max_exp_avg_sq")),
            _from_the_last_stride,
            _named_by_module,
            lambda: lambda m, o: list(ADAM_PAIRS),
            _with_a_gradient,
            lambda: _named_by(lambda p: tuple(p.shape)),
            lambda: _named_by(lambda p: p.data_ptr()),
            _parameter_or_state,
            _weights_only,
            _trainable_only,
        ),
    )
)


# --- 09.which_fixes (a prediction) ---------------------------------------------------------------

FIX_CHOICES = ("none", "only fix 1", "fix 1 and fix 2", "all three")


def _which_fixes() -> str:
    """Train every scenario briefly (a small SAE) and name the fixes that unfreeze the encoder."""
    small = {"steps": 10, "batch_size": 32, "n_features": 128, "progress": None}
    moved = [
        label
        for label in list(SCENARIOS)[1:]
        if not run_scenario(label, **small).summary()["encoder_frozen"]
    ]
    return {0: "none", 3: "all three"}.get(
        len(moved), "only fix 1" if moved == [list(SCENARIOS)[1]] else "fix 1 and fix 2"
    )


register_prediction(
    Prediction(
        "09.which_fixes",
        "Each fix changes one thing from the broken run. Which of them unfreeze the encoder?",
        FIX_CHOICES,
        _which_fixes,
        "The bug needs both a non-contiguous output and a kernel that drops writes to it. "
        "Fix 1 removes the first (Adam's state is contiguous too: zeros_like copies the layout), "
        "fix 2 the second for addcmul_/addcdiv_, and fix 3 makes the copies unnecessary: "
        "each is enough on its own.",
        answer_words=("either one", "each is enough", "all three fix"),
    )
)
