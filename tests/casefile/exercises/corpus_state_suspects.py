"""09.state_suspects' test data: the notebook's rule, right rules written other ways, and wrong
rules keyed by the shortcut each takes, with the words the feedback must contain."""

from __future__ import annotations

from collections.abc import Callable

import torch

from course.casefile.checklist import checklist, state_findings
from tests.corpus import Corpus


def reference():
    def state_suspects(model, optimizer):
        names = {p: name for name, p in model.named_parameters()}  # a tensor is a key by identity
        return [
            (names[p], key)
            for p, state in optimizer.state.items()
            for key, value in state.items()
            if isinstance(value, torch.Tensor) and not value.is_contiguous()
        ]

    return state_suspects


def _reference_pairs(optimizer):
    """(parameter tensor, state key) of every non-contiguous state tensor."""
    return [
        (p, key)
        for p, state in optimizer.state.items()
        for key, value in state.items()
        if not value.is_contiguous()
    ]


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


def _named_by(key: Callable[[torch.Tensor], object]):
    """The reference, but naming each parameter by `key` (its shape, its address) instead of
    by the tensor itself."""

    def state_suspects(model, optimizer):
        names = {key(p): name for name, p in model.named_parameters()}
        return [(names[key(p)], k) for p, k in _reference_pairs(optimizer)]

    return state_suspects


def _picked(keep):
    """The reference over the parameters `keep(name, p)` picks, looked up by their names."""

    def state_suspects(model, optimizer):
        return [
            (name, key)
            for name, p in model.named_parameters()
            if keep(name, p)
            for key, value in optimizer.state[p].items()
            if not value.is_contiguous()
        ]

    return state_suspects


def _every_key_of(keep):
    """Every key but 'step' of the parameters `keep(p)` picks: their layout, not the state's."""

    def state_suspects(model, optimizer):
        return [
            (name, key)
            for name, p in model.named_parameters()
            if keep(p)
            for key in optimizer.state[p]
            if key != "step"
        ]

    return state_suspects


def _state_picked(keep):
    """The reference, keeping the state tensors `keep(value)` picks instead of the
    non-contiguous ones."""

    def state_suspects(model, optimizer):
        names = {p: name for name, p in model.named_parameters()}
        return [
            (names[p], key)
            for p, state in optimizer.state.items()
            for key, value in state.items()
            if keep(value)
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


def _parameter_or_state():
    def state_suspects(model, optimizer):  # belt and braces: the parameter's layout, or its state's
        return [
            (name, key)
            for name, p in model.named_parameters()
            for key, value in optimizer.state[p].items()
            if value.dim() and not (p.is_contiguous() and value.is_contiguous())
        ]

    return state_suspects


def _weights_only():
    def state_suspects(model, optimizer):  # "only weight matrices can be non-contiguous"
        names = {p: name for name, p in model.named_parameters()}
        return [
            (names[p], key) for p, key in _reference_pairs(optimizer) if names[p].endswith("weight")
        ]

    return state_suspects


def _dotted():
    def state_suspects(model, optimizer):
        return [f"{name}.{key}" for name, key in reference()(model, optimizer)]

    return state_suspects


ADAM_PAIRS = [("encoder.weight", "exp_avg"), ("encoder.weight", "exp_avg_sq")]
KNOWN_KEYS = ("exp_avg", "exp_avg_sq", "momentum_buffer", "square_avg")  # Adam's, SGD's, RMSprop's
WRONG = {
    "Adam's keys only": (
        lambda: _state_with(keys=("exp_avg", "exp_avg_sq")),
        "read the keys of optimizer.state[p]",
    ),
    "the parameters' layout": (
        lambda: _every_key_of(lambda p: not p.is_contiguous()),
        "check the state tensors themselves",
    ),
    "the first param group only": (lambda: _state_with(groups=1), "every param group counts"),
    "names zipped by position": (_named_by_position, "by identity, not by position"),
    "exp_avg_sq only": (
        lambda: _state_with(keys=("exp_avg_sq",)),
        "you missed ('encoder.weight', 'exp_avg')",
    ),
    "transposes only": (
        lambda: _state_picked(lambda v: v.dim() == 2 and v.stride(0) < v.stride(1)),
        "channels_last",
    ),
    "checklist passed as the answer": (lambda: checklist, "the course's own checklist"),
    "the checklist's state check": (
        lambda: lambda m, o: [tuple(f.target.split()) for f in state_findings(m, o, True)],
        "calls state_findings()",
    ),
    "the gradients' layout": (
        lambda: _every_key_of(lambda p: p.grad is not None and not p.grad.is_contiguous()),
        "its new gradient) is contiguous now",
    ),
    "pairs the wrong way round": (
        lambda: lambda m, o: [(key, name) for name, key in reference()(m, o)],
        "(state key, parameter name)",
    ),
    "every pair twice": (lambda: lambda m, o: 2 * reference()(m, o), "more than once"),
    "every key the learner knows of": (
        lambda: _state_with(keys=(*KNOWN_KEYS, "max_exp_avg_sq")),
        "centered=True and momentum add their own keys",
    ),
    "last stride not 1": (
        lambda: _state_picked(lambda v: v.dim() and v.stride()[-1] != 1 and 0 not in v.stride()),
        "rather than guess from one stride",
    ),
    "the module's name": (_named_by_module, "'encoder' is not the name of a parameter"),
    "the story's answer, hard-coded": (
        lambda: lambda m, o: list(ADAM_PAIRS),
        "'encoder.weight' is not the name of a parameter of this model",
    ),
    "only parameters with a .grad": (
        lambda: _picked(lambda name, p: p.grad is not None),
        "Adagrad makes its state in its constructor",
    ),
    "names looked up by shape": (
        lambda: _named_by(lambda p: tuple(p.shape)),
        "by identity, not by position, shape or address",
    ),
    "names looked up by data_ptr()": (
        lambda: _named_by(lambda p: p.data_ptr()),
        "one shape and one data pointer",
    ),
    "the parameter's layout or the state's": (
        _parameter_or_state,
        "zeros_like keeps a layout only when it is dense",
    ),
    "weights only": (_weights_only, "or its parameter's name (this one is not called weight)"),
    "only parameters with requires_grad": (
        lambda: _picked(lambda name, p: p.requires_grad),
        "freezing keeps the state",
    ),
    "dotted names, not pairs": (_dotted, "(parameter name, state key) pairs"),
}


# Right rules in other styles than the reference's
def _state_iterated_directly(model, optimizer):
    names = {p: n for n, p in model.named_parameters()}
    found = set()
    for p in optimizer.state:
        for key in optimizer.state[p]:
            value = optimizer.state[p][key]
            if torch.is_tensor(value) and not value.is_contiguous():
                found.add((names[p], key))
    return found


def _param_groups_and_ids(model, optimizer):
    names = {id(p): n for n, p in model.named_parameters()}
    return [
        (names[id(p)], key)
        for group in optimizer.param_groups
        for p in group["params"]
        for key, value in optimizer.state.get(p, {}).items()
        if isinstance(value, torch.Tensor) and value.dim() > 0 and not value.is_contiguous()
    ]


def _names_first_as_a_tuple(model, optimizer):
    found = []
    for name, p in model.named_parameters():
        if p in optimizer.state:
            found += [(name, k) for k, v in optimizer.state[p].items() if not v.is_contiguous()]
    return tuple(found)


def _through_the_state_dict(model, optimizer):
    held = [p for group in optimizer.param_groups for p in group["params"]]
    names = {p: n for n, p in model.named_parameters()}
    return sorted(
        (names[held[index]], key)
        for index, state in optimizer.state_dict()["state"].items()
        for key, value in state.items()
        if torch.is_tensor(value) and not value.is_contiguous()
    )


def _a_frozenset(model, optimizer):
    return frozenset(reference()(model, optimizer))


def _pairs_as_lists(model, optimizer):
    return [list(pair) for pair in reference()(model, optimizer)]


def _name_found_by_is(model, optimizer):
    pairs = []
    for p, state in optimizer.state.items():
        name = next(n for n, q in model.named_parameters() if q is p)
        for key, value in sorted(state.items()):
            if isinstance(value, torch.Tensor) and not value.is_contiguous():
                pairs.append((name, key))
    return pairs


RIGHT = {
    "the state iterated directly, into a set": lambda: _state_iterated_directly,
    "param groups, names by id()": lambda: _param_groups_and_ids,
    "names first, as a tuple": lambda: _names_first_as_a_tuple,
    "through the optimizer's state_dict()": lambda: _through_the_state_dict,
    "a frozenset": lambda: _a_frozenset,
    "pairs as lists": lambda: _pairs_as_lists,
    "names found with `is`": lambda: _name_found_by_is,
}

CORPORA = (Corpus("09.state_suspects", reference, WRONG, RIGHT),)
