"""05.keys_that_run: the reference walk, and wrong walks of the dispatch keys keyed by flaw."""

from __future__ import annotations

import torch

from course.dispatch.tables import (
    active_keys,
    backend_key,
    call_path,
    computed_table,
    dispatch_keys,
    registered_kernels,
)
from tests.corpus import Corpus


def keys_that_run_reference():
    def keys_that_run(op, tensor):
        table = computed_table(op)
        keys = []
        for key in active_keys(tensor):
            entry = table.get(key)
            if entry is None or entry.fallthrough:
                continue
            keys.append(key)
            if key in (backend_key(tensor), "Python"):
                break
        return keys

    return keys_that_run


def _walking(keys=active_keys, table=computed_table, skip=True, python_ends=True):
    """The walk with one of its parts wrong: the keys, the table, skipping, where it ends."""

    def keys_that_run(op, tensor):
        entries, found = table(op), []
        ends = {backend_key(tensor)} | ({"Python"} if python_ends else set())
        for key in keys(tensor):
            kernel = entries.get(key)
            if kernel is None or (skip and kernel.fallthrough):
                continue
            found.append(key)
            if key in ends:
                break
        return found

    return lambda: keys_that_run


def _stopping(stop):
    """The walk, ended where `stop(key, tensor)` says (a learner's own end condition)."""

    def keys_that_run(op, tensor):
        table, keys = computed_table(op), []
        for key in active_keys(tensor):
            entry = table.get(key)
            if entry is not None and not entry.fallthrough:
                keys.append(key)
                if stop(key, tensor):
                    break
        return keys

    return lambda: keys_that_run


def _keeping(keep):
    """The right walk, then only the keys `keep(op, tensor, key)` lets through."""

    def keys_that_run(op, tensor):
        return [k for k in keys_that_run_reference()(op, tensor) if keep(op, tensor, k)]

    return lambda: keys_that_run


def _registered(op):
    return {k.key: k for k in registered_kernels(op)}


def _in_place(op):
    return op.split(".")[0].endswith("_")


def _matrix_product(op):
    return op.split(".")[0] in ("mm", "addmm", "bmm", "matmul", "linear")


def _subclass_stops_at_python(key, tensor):
    return key == backend_key(tensor) or (key == "Python" and type(tensor) is not torch.Tensor)


def _walked_from(op=None, plain=False):
    """The right walk, always on the notebook's op or on a CPU tensor of its own."""
    walk = keys_that_run_reference()
    return lambda: lambda o, t: walk(op or o, torch.zeros(2, 3) if plain else t)


CORPORA = (
    Corpus(
        "05.keys_that_run",
        keys_that_run_reference,
        wrong={
            "fallthroughs not skipped": (_walking(skip=False), "is a fallthrough runs no kernel"),
            "the tensor's own key set": (_walking(keys=dispatch_keys), "this thread's keys"),
            "no stop at Python": (_walking(python_ends=False), "went on past Python"),
            "the registrations, not the table": (
                _walking(table=_registered),
                "registered_kernels lists what was registered",
            ),
            "reversed": (
                lambda: lambda op, tensor: keys_that_run_reference()(op, tensor)[::-1],
                "wrong order",
            ),
            "the notebook's op": (
                _walked_from(op="addcmul_"),
                "read addcmul_'s table whatever the op",
            ),
            "a tensor of its own": (
                _walked_from(plain=True),
                "keys of a plain CPU tensor whatever the tensor",
            ),
            "the path the notebook printed": (
                lambda: lambda op, tensor: ["AutogradCPU", "ADInplaceOrView", "CPU"],
                "the same on all",
            ),
            "call_path": (
                lambda: lambda op, tensor: [step.key for step in call_path(op, tensor)],
                "called call_path, the course's own reader",
            ),
            "stops at the first kernel": (
                _stopping(lambda key, tensor: True),
                "your walk stopped at AutogradCPU",
            ),
            "ends at a key ending in CPU": (
                _stopping(lambda key, tensor: key.endswith("CPU")),
                "your walk stopped at AutogradCPU",
            ),
            "sorted": (
                lambda: lambda op, tensor: sorted(keys_that_run_reference()(op, tensor)),
                "the right keys in the wrong order",
            ),
            "a set": (
                lambda: lambda op, tensor: set(keys_that_run_reference()(op, tensor)),
                "return a list of key names",
            ),
            "Autocast keys dropped": (
                _keeping(lambda op, tensor, k: "Autocast" not in k),
                "this thread includes the Autocast key",
            ),
            "autograd only when requires_grad": (
                _keeping(lambda op, tensor, k: tensor.requires_grad or "Autograd" not in k),
                "requires_grad does not change the key set",
            ),
            "stops at Python for a tensor subclass only": (
                _stopping(_subclass_stops_at_python),
                "went on past Python",
            ),
            "never stops": (_stopping(lambda key, tensor: False), "went on past Python"),
            "autograd dropped under no_grad": (
                _keeping(lambda op, tensor, k: torch.is_grad_enabled() or "Autograd" not in k),
                "torch.no_grad() does not change the key set",
            ),
            "inference mode drops ADInplaceOrView too": (
                _keeping(
                    lambda op, tensor, k: (
                        not (torch.is_inference_mode_enabled() and k == "ADInplaceOrView")
                    )
                ),
                "a normal tensor (made outside the mode)",
            ),
            "ADInplaceOrView for in-place ops only": (
                _keeping(lambda op, tensor, k: k != "ADInplaceOrView" or _in_place(op)),
                "not only for in-place ops",
            ),
            "Autocast for matrix products only": (
                _keeping(lambda op, tensor, k: "Autocast" not in k or _matrix_product(op)),
                "more than matrix products",
            ),
            "a string": (lambda: lambda op, tensor: "CPU", "return a list of key names"),
        },
        right={
            "a tuple": lambda: lambda op, tensor: tuple(keys_that_run_reference()(op, tensor)),
        },
    ),
)
