"""Notebook 04's exercises: the learner builds the layout calculator's core, then uses it.

Registered on import, like every lesson's `exercises` module. The three "build" checkers run the
learner's function on a few hundred random layouts (course.layout.oracle) with real torch as the
oracle and report the smallest layout where they disagree; the MPS exercise runs a real Adam step
on the emulated device. Nothing here is hard-coded but the questions.
"""

from __future__ import annotations

import torch

from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    not_attempted,
    passed,
    register,
    register_prediction,
)
from course.layout import oracle
from course.layout.calculator import Layout

# --- Build the calculator's core ---------------------------------------------------------------


def _not_a_function(fn: object, example: str) -> Verdict | None:
    if callable(fn):
        return None
    return failed(f"give a function, e.g. {example}", type(fn).__name__, "a function")


def check_address(fn: object) -> Verdict:
    """04.address: address(index, stride, offset) against torch on ~250 random layouts."""
    wrong = _not_a_function(fn, "def address(index, stride, offset): return ...")
    if wrong:
        return wrong
    cases = oracle.address_cases()
    miss = oracle.first_mismatch(cases, fn)
    if miss is None:
        return passed(
            f"right on all {len(cases)} random layouts (offsets, permuted, sliced, expanded): "
            "an element's address is the offset plus index times stride, dim by dim"
        )
    index, stride, offset = miss.case.args
    nudge = ""
    if isinstance(miss.yours, int) and miss.yours + offset == miss.case.expected and offset:
        nudge = " (the storage offset is where the tensor starts: it counts too)"
    return failed(
        f"smallest layout where torch disagrees: {miss.case.label}{nudge}",
        miss.yours,
        f"slot {miss.case.expected}",
    )


def check_is_contiguous(fn: object) -> Verdict:
    """04.is_contiguous: is_contiguous(shape, stride) against Tensor.is_contiguous()."""
    wrong = _not_a_function(fn, "def is_contiguous(shape, stride): return ...")
    if wrong:
        return wrong
    cases = oracle.contiguity_cases()
    miss = oracle.first_mismatch(cases, fn)
    if miss is None:
        return passed(
            f"right on all {len(cases)} random layouts: row-major order with no gaps, where "
            "size-1 dims (never stepped along) and empty tensors (nothing to read) never disagree"
        )
    shape = miss.case.args[0]
    nudge = ""
    if 0 in shape:
        nudge = " (this tensor has no elements: is there any slot it could read out of order?)"
    elif 1 in shape:
        nudge = " (a size-1 dim is never stepped along: does its stride matter?)"
    return failed(
        f"smallest layout where torch disagrees: {miss.case.label}{nudge}",
        miss.yours,
        miss.case.expected,
    )


VIEW_RULES = {
    "T": (oracle.transpose_cases, "def after_T(shape, stride, offset)"),
    "step_slice": (
        oracle.step_slice_cases,
        "def step_slice(shape, stride, offset, dim, start, stop, step)",
    ),
    "permute": (oracle.permute_cases, "def permute(shape, stride, offset, dims)"),
}
_VIEW_NUDGES = {
    "T": "a transpose moves no data: which of shape, stride and offset can change?",
    "step_slice": "count the elements start, start + step, ... that stay below stop; the "
    "view starts at element `start` of that dim",
    "permute": "dim i of the result is dim dims[i] of the input",
}


def check_view_rules(rules: object) -> Verdict:
    """04.view_rules: the layout after .T, a step slice and a permute, each against torch."""
    if not isinstance(rules, dict) or set(rules) != set(VIEW_RULES):
        return failed(
            "answer with a dict of your three functions: "
            "{'T': after_T, 'step_slice': step_slice, 'permute': permute}",
            type(rules).__name__,
            "a dict with keys " + ", ".join(VIEW_RULES),
        )
    total = 0
    for name, (make_cases, signature) in VIEW_RULES.items():
        wrong = _not_a_function(rules[name], f"{signature}: return shape, stride, offset")
        if wrong:
            return wrong
        cases = make_cases()
        total += len(cases)
        try:
            miss = oracle.first_mismatch(cases, rules[name])
        except NotImplementedError:  # the scaffold's own: first_mismatch reports any other
            return not_attempted(f"your {name!r} function still raises NotImplementedError")
        if miss is not None:
            return failed(
                f"your {name!r} rule: smallest layout where torch disagrees: {miss.case.label}. "
                f"Hint: {_VIEW_NUDGES[name]}",
                miss.yours,
                f"(shape, stride, offset) = {miss.case.expected}",
            )
    return passed(
        f"all three rules agree with torch on {total} random layouts: views only rearrange "
        "shape, stride and offset; the storage never moves"
    )


def _address_reference():
    def address(index, stride, offset):
        return offset + sum(i * s for i, s in zip(index, stride, strict=True))

    return address


def _is_contiguous_reference():
    def is_contiguous(shape, stride):
        if 0 in shape:
            return True  # nothing to read, so nothing out of order
        expected = 1
        for size, step in zip(reversed(shape), reversed(stride), strict=True):
            if size != 1:  # a size-1 dim is never stepped along
                if step != expected:
                    return False
                expected *= size
        return True

    return is_contiguous


def _after_t(shape, stride, offset):
    return shape[::-1], stride[::-1], offset


def _step_slice(shape, stride, offset, dim, start, stop, step):
    new_shape, new_stride = list(shape), list(stride)
    new_shape[dim] = (stop - start + step - 1) // step  # ceil: start, start+step, ... < stop
    new_stride[dim] = stride[dim] * step
    return tuple(new_shape), tuple(new_stride), offset + start * stride[dim]


def _permute(shape, stride, offset, dims):
    return tuple(shape[d] for d in dims), tuple(stride[d] for d in dims), offset


def _view_rules_reference():
    return {"T": _after_t, "step_slice": _step_slice, "permute": _permute}


def _contiguous_strides_only(shape, stride):
    expected, running = [], 1
    for size in reversed(shape):
        expected.insert(0, running)
        running *= size
    return tuple(stride) == tuple(expected)


def _with_size_one_rule(shape, stride):
    expected = 1
    for size, step in zip(reversed(shape), reversed(stride), strict=True):
        if size != 1:
            if step != expected:
                return False
            expected *= size
    return True


register(
    Exercise(
        "04.address",
        "Write address(index, stride, offset): the storage slot of the element at `index`.",
        check_address,
        "Start at the offset; each step along dim d moves stride[d] slots.",
        _address_reference,
        (
            lambda: (
                lambda index, stride, offset: sum(i * s for i, s in zip(index, stride, strict=True))
            ),
            lambda: (
                lambda index, stride, offset: (
                    offset + sum(i * s for i, s in zip(index, stride[::-1], strict=True))
                )
            ),
            lambda: lambda index, stride, offset: offset + sum(index) * max(stride),
        ),
    )
)
register(
    Exercise(
        "04.is_contiguous",
        "Write is_contiguous(shape, stride) with torch's rules (size-1 dims, empty tensors).",
        check_is_contiguous,
        "Walk the dims from last to first: the stride must equal the product of the sizes "
        "after it. Decide what a size-1 dim, and a tensor with no elements, should do.",
        _is_contiguous_reference,
        (
            lambda: _contiguous_strides_only,
            lambda: _with_size_one_rule,
            lambda: lambda shape, stride: list(stride) == sorted(stride, reverse=True),
            lambda: lambda shape, stride: not stride or stride[-1] == 1,
        ),
    )
)
register(
    Exercise(
        "04.view_rules",
        "Write the layout (shape, stride, offset) after .T, after a step slice "
        "[start:stop:step] on one dim, and after permute(dims).",
        check_view_rules,
        "None of them moves data. .T reverses the dims; a step slice starts `start` elements "
        "into the dim and jumps `step` elements at a time; permute reorders the dims.",
        _view_rules_reference,
        (
            lambda: {
                **_view_rules_reference(),
                "T": lambda shape, stride, offset: (shape[::-1], stride, offset),
            },
            lambda: {
                **_view_rules_reference(),
                "step_slice": lambda shape, stride, offset, dim, start, stop, step: (
                    tuple((stop - start) // step if d == dim else s for d, s in enumerate(shape)),
                    tuple(s * step if d == dim else s for d, s in enumerate(stride)),
                    offset + start * stride[dim],
                ),
            },
            lambda: {
                **_view_rules_reference(),
                "step_slice": lambda shape, stride, offset, dim, start, stop, step: (
                    _step_slice(shape, stride, offset, dim, start, stop, step)[:2] + (offset,)
                ),
            },
            lambda: {
                **_view_rules_reference(),
                "permute": lambda shape, stride, offset, dims: (
                    tuple(shape[dims.index(d)] for d in range(len(dims))),
                    tuple(stride[dims.index(d)] for d in range(len(dims))),
                    offset,
                ),
            },
        ),
    )
)


# --- Predictions --------------------------------------------------------------------------------


def _transpose_writes() -> str:
    x = torch.arange(24).view(4, 6)
    x.T[0, 1] = 100
    return "yes: x[1, 0] becomes 100" if x[1, 0].item() == 100 else "no: x.T is a copy"


def _clone_layout() -> str:
    weight = torch.zeros(384, 1536)  # the decoder weight's shape
    clone = weight.T.clone()
    return "transposed, like .T" if clone.stride() == (1, 1536) else "row-major (contiguous)"


register_prediction(
    Prediction(
        "04.transpose_writes",
        "y = x.T; y[0, 1] = 100. Does x change?",
        ("yes: x[1, 0] becomes 100", "no: x.T is a copy"),
        _transpose_writes,
        "x.T is a view: same storage, swapped strides. Element (0, 1) of the view is the "
        "storage slot of x[1, 0].",
    )
)
register_prediction(
    Prediction(
        "04.clone_layout",
        "The story's init: encoder.weight = decoder.weight.T.clone(). Which strides does the clone "
        "get?",
        ("row-major (contiguous)", "transposed, like .T"),
        _clone_layout,
        "clone() defaults to memory_format=torch.preserve_format: a dense layout is copied as "
        "it is, so the new tensor keeps .T's strides (1, 1536).",
        answer_words=(
            "produced that stride",
            "keeps the layout",
            "kept the layout",
            "preserves the layout",
            "preserve_format",
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


def check_make_contiguous(fn: object) -> Verdict:
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
    gen = torch.Generator().manual_seed(0)  # private: the learner's global RNG is untouched

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen)

    return [
        ("torch.randn(6, 4)", randn(6, 4)),
        ("torch.randn(8, 4)[2:5]", randn(8, 4)[2:5]),
        ("torch.randn(1, 6).T", randn(1, 6).T),
        ("torch.randn(4, 6).T.contiguous()", randn(4, 6).T.contiguous()),
        ("torch.randn(4, 6).T.clone()", randn(4, 6).T.clone()),
        ("torch.randn(6, 4).reshape(4, 6)", randn(6, 4).reshape(4, 6)),
        ("torch.randn(2, 3, 4).permute(0, 1, 2)", randn(2, 3, 4).permute(0, 1, 2)),
    ]


def mps_suspects() -> list[torch.Tensor]:
    """Seven would-be Adam parameters; exactly one freezes on PyTorch 2.2.1 / macOS 14 MPS."""
    return [tensor for _, tensor in _suspect_builders()]


def frozen_on_mps(tensor: torch.Tensor, profile: str | None = None) -> bool:
    """Experiment: does one Adam step leave this tensor unchanged on the emulated MPS device
    (under `profile`; None: the story's)?"""
    from course import emps

    with emps.use_profile(profile or emps.DEFAULT_PROFILE):
        param = torch.nn.Parameter(tensor.to(emps.DEVICE))
        param.grad = torch.ones_like(param)
        before = param.detach().inner.clone()
        torch.optim.Adam([param], lr=0.1).step()
        return torch.equal(before, param.detach().inner)


def check_find_mps_bug(answer: object) -> Verdict:
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
        f"{label} has stride {tensor.stride()}: clone() kept the transposed layout, and on "
        "the emulated 2.2.1 MPS device Adam's update of such a parameter never lands "
        "(notebooks 05-06 find out why)"
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
