"""09.suspects' test data: the notebook's rule, right rules written other ways, and wrong rules
keyed by the shortcut each takes, with the words the feedback must contain."""

from __future__ import annotations

import torch

from course.casefile.checklist import checklist, parameter_findings
from tests.corpus import Corpus


def reference():
    def suspects(model):
        tensors = [*model.named_parameters(), *model.named_buffers()]
        return [name for name, t in tensors if not t.is_contiguous()]

    return suspects


def tensors(model):
    """The model's named parameters and buffers, as most rules below take them."""
    return [*model.named_parameters(), *model.named_buffers()]


def _row_major(shape):
    strides = [1]
    for size in reversed(shape[1:]):
        strides.insert(0, strides[0] * size)
    return tuple(strides)


def _rule(keep, of=tensors):
    """A wrong rule: the names of `of(model)`'s tensors that `keep(tensor)` picks."""
    return lambda: lambda model: [name for name, t in of(model) if keep(t)]


def _parameters(model):
    return list(model.named_parameters())


def _top_level(model):
    return [*model.named_parameters(recurse=False), *model.named_buffers(recurse=False)]


def _state_dict(model):
    return list(model.state_dict().items())


def _parameters_and_state_dict(model):
    return [*model.named_parameters(), *model.state_dict().items()]


def _not_contiguous(t):
    return not t.is_contiguous()


def _with_grad(t):
    return t.grad is not None and not t.is_contiguous()


WRONG = {
    "last stride not 1": (_rule(lambda p: p.stride()[-1] != 1, _parameters), "last stride is 1"),
    "strides not in decreasing order": (
        _rule(lambda p: list(p.stride()) != sorted(p.stride())[::-1], _parameters),
        "last stride is 1",
    ),
    "parameters only": (_rule(_not_contiguous, _parameters), "you missed scale, a buffer, shape"),
    "broadcast (stride-0) tensors taken for fine": (
        _rule(lambda t: not t.is_contiguous() and 0 not in t.stride()),
        "you missed scale, a buffer, shape [4, 3], stride (0, 1)",
    ),
    "every matrix": (_rule(lambda p: p.dim() > 1, _parameters), "is a contiguous parameter"),
    "only parameters with a gradient": (_rule(_with_grad, _parameters), "no .grad"),
    "the story's answer, hard-coded": (
        lambda: lambda model: ["encoder.weight"],
        "is not a tensor of this model",
    ),
    "top-level tensors only (recurse=False)": (
        _rule(_not_contiguous, _top_level),
        "of the submodule 'encoder'",
    ),
    "transposes only": (
        _rule(lambda t: t.dim() == 2 and t.stride(0) < t.stride(1)),
        "no transpose",
    ),
    "the course's checklist, filtered": (
        lambda: lambda m: [f.target for f in checklist(m) if f.check == "contiguity"],
        "calls checklist()",
    ),
    "the checklist's parameter check": (
        lambda: lambda m: [f.target for f in parameter_findings(m, True) if "not" in f.message],
        "calls parameter_findings()",
    ),
    "state_dict() instead of the model's tensors": (
        _rule(_not_contiguous, _state_dict),
        "persistent=False (so not in state_dict())",
    ),
    "strides compared with the row-major ones": (
        _rule(lambda t: t.dim() and t.stride() != _row_major(t.shape)),
        "size-1 dimensions do not count",
    ),
    "parameters and state_dict() together": (
        _rule(_not_contiguous, _parameters_and_state_dict),
        "more than once",
    ),
    "matrices only": (
        _rule(lambda t: t.dim() > 1 and not t.is_contiguous()),
        "a vector with stride 2 is not contiguous",
    ),
    "a storage offset taken for a layout problem": (
        _rule(lambda t: t.storage_offset() != 0 or not t.is_contiguous()),
        "storage offset 8",
    ),
    "views taken for the non-contiguous tensors (_base)": (
        _rule(lambda t: t._base is not None),
        "no view, no gaps",
    ),
    "tensors that do not fill their storage": (
        _rule(lambda t: t.untyped_storage().nbytes() != t.numel() * t.element_size()),
        "which it fills",
    ),
    "channels_last counted as fine": (
        _rule(
            lambda t: (
                not t.is_contiguous() and not t.is_contiguous(memory_format=torch.channels_last)
            )
        ),
        "contiguous in that memory format, but not is_contiguous()",
    ),
    "floating-point tensors only": (
        _rule(lambda t: t.is_floating_point() and not t.is_contiguous()),
        "check every dtype",
    ),
    "numpy's C_CONTIGUOUS flag": (
        _rule(lambda t: not t.detach().numpy().flags["C_CONTIGUOUS"]),
        "suspects raised TypeError: can't convert emps:0",
    ),
    "one name, not a list": (lambda: lambda model: "encoder.weight", "return a list"),
    "the tensors, not their names": (
        lambda: lambda model: list(model.parameters()),
        "names (strings), not the tensors",
    ),
}


# Right rules in other styles than the reference's
def _a_frozenset(model):
    return frozenset(name for name, t in tensors(model) if not t.is_contiguous())


def _a_sorted_tuple_by_loops(model):
    found = []
    for name, p in model.named_parameters():
        if not p.is_contiguous():
            found.append(name)
    for name, b in model.named_buffers():
        if not b.is_contiguous():
            found.append(name)
    return tuple(sorted(found))


def _a_set_per_module(model):
    found = set()
    for prefix, module in model.named_modules():
        own = [*module.named_parameters(recurse=False), *module.named_buffers(recurse=False)]
        found |= {f"{prefix}.{n}" if prefix else n for n, t in own if not t.is_contiguous()}
    return found


def _own_stride_rule(model):
    def contiguous(t):
        expected = 1
        for size, stride in reversed(list(zip(t.shape, t.stride(), strict=True))):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    named = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    return [name for name, t in named.items() if not contiguous(t)]


def _printing_each_tensor(model):
    found = []
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        print(name, tuple(t.shape), t.stride(), t.is_contiguous())
        if not t.is_contiguous(memory_format=torch.contiguous_format):
            found.append(name)
    return found


RIGHT = {
    "a frozenset": lambda: _a_frozenset,
    "a sorted tuple, by loops": lambda: _a_sorted_tuple_by_loops,
    "a set, module by module": lambda: _a_set_per_module,
    "its own stride rule": lambda: _own_stride_rule,
    "printing each tensor": lambda: _printing_each_tensor,
}

CORPORA = (Corpus("09.suspects", reference, WRONG, RIGHT),)
