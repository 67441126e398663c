"""Notebook 04's exercises: predict a stride, make a view contiguous, find the freezing tensor.

Registered on import, like every lesson's `exercises` module. Each checker asks
real torch (and, for the MPS exercise, the emulated device) for the expected answer, so nothing
here is hard-coded but the questions.
"""

from __future__ import annotations

import torch

from course.errors import CourseError
from course.exercises import Exercise, failed, passed, register
from course.layout.calculator import Layout, apply_torch
from course.layout.opchain import parse_chain

# --- Exercises ------------------------------------------------------------------------------

PREDICT_SHAPE = (4, 6, 8)
PREDICT_CHAIN = "transpose(0, 2); [1:, ::2]; unsqueeze(1)"


def _as_stride(answer: object) -> tuple[int, ...]:
    if isinstance(answer, torch.Tensor) or not isinstance(answer, (tuple, list, torch.Size)):
        raise CourseError(
            f"give the stride as a tuple of ints like (1, 2, 3), not a {type(answer).__name__}"
        )
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in answer):
        raise CourseError(f"every entry of the stride must be a whole number: {answer!r}")
    return tuple(answer)


def check_predict_stride(answer: object) -> object:
    """04.predict_stride: the learner's stride vs torch's for PREDICT_CHAIN."""
    ops = parse_chain(PREDICT_CHAIN)
    tensor = torch.zeros(PREDICT_SHAPE)
    for op in ops:
        tensor = apply_torch(tensor, op)
    expected = tensor.stride()
    shape = f"a tuple of {len(expected)} ints"
    try:
        yours = _as_stride(answer)
    except CourseError as exc:
        return failed(str(exc), answer, shape)
    if len(yours) != len(expected):
        return failed(
            f"the result has {len(expected)} dims (shape {tuple(tensor.shape)}); your "
            f"stride has {len(yours)} entries",
            yours,
            shape,
        )
    wrong = [d for d in range(len(yours)) if yours[d] != expected[d]]
    if wrong:
        # show the entries you got right, and '?' where you did not: a nudge, not the answer
        masked = "(" + ", ".join("?" if d in wrong else str(v) for d, v in enumerate(yours)) + ")"
        return failed(
            f"dims {wrong} are off. Trace the chain one step at a time in explore(): "
            f"shape {PREDICT_SHAPE}, ops {PREDICT_CHAIN!r}",
            yours,
            masked,
        )
    return passed(
        f"stride {expected}: slicing multiplied a stride, unsqueeze inserted "
        "size*stride of the dim it landed before, and no data moved"
    )


def _predict_stride_reference():
    stride = (6 * 8, 8, 1)  # torch.zeros(4, 6, 8) is contiguous
    stride = (stride[2], stride[1], stride[0])  # transpose(0, 2) swaps two entries
    stride = (stride[0], stride[1] * 2, stride[2])  # [1:, ::2]: '1:' moves the offset, ::2 doubles
    size_1 = 6 // 2  # dim 1 after ::2 has 3 elements
    return (stride[0], size_1 * stride[1], stride[1], stride[2])  # unsqueeze(1): size * stride


register(
    Exercise(
        "04.predict_stride",
        f"Predict x.stride() for x = torch.zeros{PREDICT_SHAPE} after {PREDICT_CHAIN!r}.",
        check_predict_stride,
        "Go step by step: transpose swaps stride entries; a slice with step k multiplies "
        "that dim's stride by k (its start only moves the offset); unsqueeze(d) inserts "
        "size[d] * stride[d].",
        _predict_stride_reference,
        (
            lambda: (12, 12, 4, 1),
            lambda: (1, 24, 8, 48),
            lambda: (1, 1, 16, 48),
            lambda: torch.tensor([1, 48, 16, 48]),
        ),
    )
)


def layout_cases() -> dict[str, torch.Tensor]:
    """Inputs for 04.make_contiguous: four non-contiguous layouts and two contiguous ones."""
    base = torch.arange(24.0).view(4, 6)
    images = torch.arange(120.0).view(2, 3, 4, 5).to(memory_format=torch.channels_last)
    return {
        "transposed": base.T,
        "every other column": base[:, ::2],
        "expanded": base[:1].expand(3, 6),
        "channels_last": images,
        "rows 1-2 (offset 6)": base[1:3],
        "already contiguous": base,
    }


def check_make_contiguous(fn: object) -> object:
    """04.make_contiguous: contiguous result, same values, input untouched, no wasted copy."""
    if not callable(fn):
        return failed("give a function, e.g. def make_contiguous(x): return ...", fn, "a function")
    for name, x in layout_cases().items():
        before = (x.clone(), x.stride())
        try:
            out = fn(x)
        except Exception as exc:
            return failed(f"on the {name} input your function raised {type(exc).__name__}: {exc}")
        if not isinstance(out, torch.Tensor) or out.shape != x.shape or not torch.equal(out, x):
            return failed(
                f"on the {name} input the result must hold the same values in the same shape",
                getattr(out, "shape", out),
                tuple(x.shape),
            )
        if not torch.equal(x, before[0]) or x.stride() != before[1]:
            return failed(f"your function changed its {name} input; return a new layout instead")
        if not out.is_contiguous():
            return failed(
                f"on the {name} input the result is not contiguous",
                out.stride(),
                Layout.contiguous(tuple(x.shape)).stride,
            )
        if x.is_contiguous() and out.data_ptr() != x.data_ptr():
            return failed(
                f"the {name} input was contiguous already, yet your function copied "
                "it: a wasted copy",
                "a copy",
                "the input itself",
            )
    return passed(
        "contiguous() copies exactly when it has to, and returns the tensor itself "
        "when it is already contiguous"
    )


def _make_contiguous_reference():
    def make_contiguous(x):
        return x.contiguous()

    return make_contiguous


register(
    Exercise(
        "04.make_contiguous",
        "Write make_contiguous(x): one call that returns a contiguous tensor equal to x, "
        "without copying when x is already contiguous.",
        check_make_contiguous,
        "clone() preserves the layout; clone(memory_format=torch.contiguous_format) always copies. "
        "Which method copies only when it must?",
        _make_contiguous_reference,
        (
            lambda: lambda x: x.clone(),
            lambda: lambda x: x.clone(memory_format=torch.contiguous_format),
            lambda: lambda x: x.reshape(x.shape),
            lambda: lambda x: x.view(-1).view(x.shape),
        ),
    )
)


def _suspect_builders() -> list[tuple[str, torch.Tensor]]:
    torch.manual_seed(0)
    return [
        ("torch.randn(6, 4)", torch.randn(6, 4)),
        ("torch.randn(8, 4)[2:5]", torch.randn(8, 4)[2:5]),
        ("torch.randn(1, 6).T", torch.randn(1, 6).T),
        ("torch.randn(4, 6).T.contiguous()", torch.randn(4, 6).T.contiguous()),
        ("torch.randn(4, 6).T.clone()", torch.randn(4, 6).T.clone()),
        ("torch.randn(6, 4).reshape(4, 6)", torch.randn(6, 4).reshape(4, 6)),
        ("torch.randn(2, 3, 4).permute(0, 1, 2)", torch.randn(2, 3, 4).permute(0, 1, 2)),
    ]


def mps_suspects() -> list[torch.Tensor]:
    """Seven would-be Adam parameters; exactly one freezes on PyTorch 2.2.1 / macOS 14 MPS."""
    return [tensor for _, tensor in _suspect_builders()]


def frozen_on_mps(tensor: torch.Tensor, profile: str = "2.2.1-macos14") -> bool:
    """Experiment: does one Adam step leave this tensor unchanged on the emulated MPS device?"""
    from course import emps

    with emps.use_profile(profile):
        param = torch.nn.Parameter(tensor.to(emps.DEVICE))
        param.grad = torch.ones_like(param)
        before = param.detach().inner.clone()
        torch.optim.Adam([param], lr=0.1).step()
        return torch.equal(before, param.detach().inner)


def check_find_mps_bug(answer: object) -> object:
    """04.find_mps_bug: the index of the suspect that an emulated Adam step leaves frozen."""
    suspects = _suspect_builders()
    frozen = [i for i, (_, t) in enumerate(suspects) if frozen_on_mps(t)]
    wanted = "the index of the tensor that froze"
    if isinstance(answer, bool) or not isinstance(answer, int):
        return failed(
            "answer with the index (an int) of the tensor in mps_suspects()", answer, wanted
        )
    if not 0 <= answer < len(suspects):
        return failed(
            f"there are {len(suspects)} suspects: indices 0 to {len(suspects) - 1}",
            answer,
            wanted,
        )
    label, tensor = suspects[answer]
    if answer not in frozen:
        traps = []
        if tensor.storage_offset():
            traps.append("a storage offset does not make a tensor non-contiguous")
        if 1 in tensor.shape:
            traps.append("strides of size-1 dims do not count for contiguity")
        why = "; ".join(traps) or "its strides are row-major"
        return failed(
            f"{label} (stride {tensor.stride()}, offset {tensor.storage_offset()}) is "
            f"contiguous, so Adam updates it on the emulated MPS device: {why}",
            answer,
            wanted,
        )
    return passed(
        f"{label} has stride {tensor.stride()}: clone() kept the transposed layout, so "
        "addcmul_/addcdiv_ write into a Placeholder's temporary copy and the update is lost"
    )


def _find_mps_bug_reference():
    suspects = mps_suspects()
    return [t.is_contiguous() for t in suspects].index(False)


register(
    Exercise(
        "04.find_mps_bug",
        "Which tensor in mps_suspects() (give its index) would freeze as an Adam parameter on "
        "PyTorch 2.2.1 / macOS 14 MPS?",
        check_find_mps_bug,
        "Only a non-contiguous output loses its writes. Look at .is_contiguous(), not at how odd "
        "the stride or the offset looks.",
        _find_mps_bug_reference,
        tuple((lambda i=i: i) for i in (0, 1, 2, 3, 5, 6)) + (lambda: True,),
    )
)
